"""latency, cost and token-usage budgets."""

from __future__ import annotations

from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def _grade(
    make_case: CaseFactory, make_session: SessionFactory, assertion: dict, **session: Any
) -> GraderResult:
    return only_grader(grade_trial(make_case([assertion]), make_session(**session)))


@pytest.mark.parametrize(("duration", "score"), [(900, 1.0), (1000, 1.0), (1001, 0.0), (None, 0.0)])
def test_latency(
    make_case: CaseFactory, make_session: SessionFactory, duration: int | None, score: float
) -> None:
    grade = _grade(
        make_case, make_session, {"type": "latency", "threshold": 1000}, duration_ms=duration
    )
    assert grade.score == score
    if duration is None:
        assert grade.assertions[0].evidence == "no duration was recorded for this run"


@pytest.mark.parametrize(("cost", "score"), [(0.05, 1.0), (0.1, 1.0), (0.11, 0.0), (None, 0.0)])
def test_cost(
    make_case: CaseFactory, make_session: SessionFactory, cost: float | None, score: float
) -> None:
    grade = _grade(make_case, make_session, {"type": "cost", "budget": 0.1}, cost_usd=cost)
    assert grade.score == score


def test_token_usage_counts_cached_tokens_in_the_total(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    usage = TokenUsage(input=600, output=300, cached=200)
    within = {"type": "token-usage", "max_input": 600, "max_output": 300}
    assert _grade(make_case, make_session, within, token_usage=usage).score == 1.0
    over_total = {"type": "token-usage", "max_total": 1000, "max_output": 500}
    grade = _grade(make_case, make_session, over_total, token_usage=usage)
    assert grade.score == 0.0
    assert [(a.text, a.passed, a.evidence) for a in grade.assertions] == [
        ("total tokens ≤ 1000", False, "used 1100"),
        ("output tokens ≤ 500", True, "used 300"),
    ]


def test_token_usage_unknown(make_case: CaseFactory, make_session: SessionFactory) -> None:
    grade = _grade(make_case, make_session, {"type": "token-usage", "max_total": 10})
    assert grade.score == 0.0
    assert grade.assertions[0].evidence == "no token usage was recorded"
