"""Judged report: the failure attribution section (F4), by tier and category, with the pass rate
with and without environmental failures."""

from __future__ import annotations

import pytest

from evals_pipeline.reporting import build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import (
    CAPABILITY,
    ENVIRONMENTAL,
    graded,
    judged,
)


def test_failure_breakdown_f4() -> None:
    grades = [graded("a", f"t{i}", ["pass" if i < 24 else "fail"]) for i in range(40)]
    judgments = [
        judged("a", f"t{i}", [False], failure=ENVIRONMENTAL if i < 28 else CAPABILITY)
        for i in range(24, 40)
    ]
    # a stale classification of a trial the grades hold as passed does not count
    judgments.append(judged("a", "t0", [True], failure=CAPABILITY))
    report = build_report("s", grades, agents=["a"], judgments=judgments)
    [f] = report.failure_breakdown
    b = f.breakdown
    assert (f.agent, b.n_trials, b.n_failed, f.n_unclassified) == ("a", 40, 16, 0)
    assert b.by_tier["environmental"].count == 4 and b.by_tier["capability"].count == 12
    assert b.by_category["llm_provider_error"].count == 4
    assert b.infra_failure_rate == pytest.approx(0.1, abs=5e-5)
    assert b.pass_rate_incl_infra == pytest.approx(0.6, abs=5e-5)
    assert b.pass_rate_excl_infra == pytest.approx(24 / 36, abs=5e-5)
    text = render_markdown(report)
    assert "## Failure attribution" in text
    assert "| a | 40 | 24 | 16 | 4 | 0 | 12 | 0 | 10.0% | 60.0% | 66.7% |" in text
    assert "| a | E2 llm_provider_error | environmental | 4 | 25.0% |" in text


def test_no_failure_breakdown_without_judgments() -> None:
    report = build_report("s", [graded("a", "t", ["fail"])], agents=["a"])
    assert report.failure_breakdown == []
    assert "Failure attribution" not in render_markdown(report)
