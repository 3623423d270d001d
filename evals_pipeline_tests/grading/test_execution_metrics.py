"""execution-metrics: one check per limit over the transcript and the run's measurements."""

from __future__ import annotations

from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.models.messages import Message, TokenUsage, ToolCall
from evals_pipeline.models.session import Session
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def _messages(*tools: str) -> list[Message]:
    messages = [Message(role="user", content="Look around.")]
    for i, tool in enumerate(tools):
        call = ToolCall(tool=tool, input={}, id=f"c{i}")
        messages.append(Message(role="assistant", content=None, tool_calls=[call]))
    messages.append(Message(role="assistant", content="Done."))
    return messages


@pytest.fixture
def session(make_session: SessionFactory) -> Session:
    return make_session(
        _messages("Read", "Grep", "Read", "Edit"),
        token_usage=TokenUsage(input=100, output=50, cached=1000),
        cost_usd=0.012,
        duration_ms=900,
    )


def _grade(make_case: CaseFactory, session: Session, **limits: Any) -> GraderResult:
    return only_grader(grade_trial(make_case([{"type": "execution-metrics", **limits}]), session))


def test_every_limit_within_budget(make_case: CaseFactory, session: Session) -> None:
    grade = _grade(
        make_case,
        session,
        max_tool_calls=4,
        max_llm_calls=5,
        max_tokens=150,  # input + output; cached tokens do not count
        max_cost_usd=0.05,
        max_duration_ms=1000,
        target_exploration_ratio=0.7,
    )
    assert grade.score == 1.0
    assert [a.text for a in grade.assertions] == [
        "Tool calls 4 <= 4 max",
        "LLM calls 5 <= 5 max",
        "Total tokens 150 <= 150 max",
        "Cost $0.0120 <= $0.0500 max",
        "Duration 900ms <= 1000ms max",
        "Exploration ratio 0.75 within tolerance of target 0.7",
    ]


def test_score_is_the_share_of_checks_passed(make_case: CaseFactory, session: Session) -> None:
    grade = _grade(
        make_case,
        session,
        max_tool_calls=3,
        max_tokens=200,
        target_exploration_ratio=0.2,
        exploration_tolerance=0.1,
    )
    assert grade.score == pytest.approx(1 / 3)
    assert grade.assertions[0].text == "Tool calls 4 > 3 max"
    assert grade.assertions[2].text == (
        "Exploration ratio 0.75 outside tolerance of target 0.2 (diff: 0.55, tolerance: 0.1)"
    )


def test_unrecorded_metrics_fail_their_checks(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    bare = make_session(_messages(), duration_ms=None)
    grade = _grade(
        make_case,
        bare,
        max_tokens=10,
        max_cost_usd=1,
        max_duration_ms=10,
        target_exploration_ratio=0.5,
    )
    assert grade.score == 0.0
    assert [a.text for a in grade.assertions] == [
        "Token usage data not available",
        "Cost data not available",
        "Duration data not available",
        "Exploration ratio not available (no tool calls)",
    ]


def test_a_limit_is_required(make_case: CaseFactory) -> None:
    with pytest.raises(ValueError, match="set at least one of max_tool_calls"):
        make_case([{"type": "execution-metrics", "exploration_tolerance": 0.1}])
