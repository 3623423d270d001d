"""Judged report: judge health (grounding, abstention, per-judge calibration, one entry per judge
target) and judge cost, kept apart from the agents' cost and including LLM graders."""

from __future__ import annotations

import pytest

from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.reporting import build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import (
    consistent,
    graded,
    judged,
    label,
    pair,
    reading,
    vote,
)


def test_judge_health_grounding_and_per_judge_calibration() -> None:
    good = [vote("j1-2025", "PASS", True), vote("m2", "FAIL", False)]
    bad = [vote("j1-2025", "FAIL", True, partial=True), vote("m2", "PASS", None)]
    judgments = [judged("a", "t1", [True], votes=good), judged("a", "t2", [False], votes=bad)]
    pairwise = [pair("t1", "a", "b", "A", [reading("j1", "FIRST", "SECOND")])]
    labels = [label("t1", "PASS", agent="a"), label("t2", "PASS", agent="a")]
    report = build_report(
        "s", [], agents=["a", "b"], judgments=judgments, pairwise=pairwise, labels=labels
    )
    health = {h.judge: h for h in report.judge_health}
    assert list(health) == ["j1", "m2"]  # votes of model j1-2025 are credited to target j1
    j1, m2 = health["j1"], health["m2"]
    assert (j1.votes, j1.invalid, j1.partially_grounded, j1.grounding_failure_rate) == (
        2,
        0,
        1,
        0.0,
    )
    assert j1.pairwise_readings == 1 and j1.position is not None
    assert j1.calibration is not None and (j1.calibration.tp, j1.calibration.fn) == (1, 1)
    assert (m2.votes, m2.invalid, m2.ungrounded) == (2, 1, 1)
    assert (m2.grounding_failure_rate, m2.abstention_rate) == (0.5, 1.0)
    assert m2.position is None and m2.calibration is None  # no valid vote on a labelled trial


def test_two_judge_targets_of_one_model_keep_their_own_health() -> None:
    # The same model behind two targets (say, two base URLs): votes name their target.
    votes = [vote("m", "PASS", True, judge="direct"), vote("m", "FAIL", False, judge="proxied")]
    judgments = [judged("a", "t1", [True], votes=votes)]
    pairwise = [pair("t1", "a", "b", "A", [reading("direct", "FIRST", "SECOND")])]
    report = build_report("s", [], agents=["a", "b"], judgments=judgments, pairwise=pairwise)
    health = {h.judge: h for h in report.judge_health}
    assert sorted(health) == ["direct", "proxied"]
    assert (health["direct"].votes, health["direct"].invalid) == (1, 0)
    assert (health["proxied"].votes, health["proxied"].invalid) == (1, 1)
    assert health["proxied"].grounding_failure_rate == 1.0


def test_judge_cost_is_kept_apart_from_the_agents() -> None:
    judgments = [
        judged("a", "t1", [True], calls=10, cost=0.5),
        judged("a", "t2", [True], calls=5, cost=None),
        judged("b", "t1", [True], calls=10, cost=0.25),
    ]
    pairwise = [pair("t1", "a", "b", "A", consistent())]
    grades = [graded("a", "t1", ["pass"]), graded("b", "t1", ["pass"])]
    report = build_report("s", grades, agents=["a", "b"], judgments=judgments, pairwise=pairwise)
    usage = report.judge_usage
    assert usage is not None
    assert (usage.by_agent["a"].calls, usage.by_agent["a"].cost_usd) == (15, 0.5)
    assert (usage.pairwise.calls, usage.pairwise.cost_usd) == (2, 0.01)
    assert usage.graders == LlmUsage()
    assert (usage.total.calls, usage.total.input_tokens) == (27, 250)
    assert usage.total.cost_usd == pytest.approx(0.76)
    assert [a.cost_usd for a in report.agents] == [None, None]  # none reported, none added
    text = render_markdown(report)
    assert "## Judge cost" in text
    assert "| **total** | 27 | 0 | 250 | 25 | 0.7600 |" in text
    assert "LLM graders" not in text
    assert build_report("s", grades, agents=["a", "b"]).judge_usage is None


def test_llm_graders_usage_counts_as_judge_cost() -> None:
    grader_call = LlmUsage(calls=1, input_tokens=100, output_tokens=10, cost_usd=0.02)
    summed = graded("a", "t1", ["pass"])
    summed.trials[0].judge_usage = grader_call + grader_call  # the trial's sum of its graders
    per_grader = graded("a", "t2", ["fail"])  # only the graders carry it
    per_grader.trials[0].graders = [
        GraderResult(name="g", type="llm-grader", verdict="fail", judge_usage=grader_call)
    ]
    report = build_report("s", [summed, per_grader], agents=["a"])
    usage = report.judge_usage
    assert usage is not None and usage.judgments == LlmUsage() and usage.by_agent == {}
    assert (usage.graders.calls, usage.graders.input_tokens) == (3, 300)
    assert usage.graders.cost_usd == pytest.approx(0.06)
    assert usage.total == usage.graders
    assert report.agents[0].cost_usd is None  # the agents reported none; graders are apart
    assert "| LLM graders | 3 | 0 | 300 | 30 | 0.0600 |" in render_markdown(report)
