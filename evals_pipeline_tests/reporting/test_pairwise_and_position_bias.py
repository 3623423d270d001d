"""Judged report: position-swapped pairwise win rates mapped back to the agents, and position
bias flagged per judge and propagated to the comparisons and the report."""

from __future__ import annotations

import pytest

from evals_pipeline.reporting import build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import consistent, pair, reading


def test_pairwise_win_rate_maps_verdicts_back_to_the_agents() -> None:
    pairwise = [
        pair("c1", "a", "b", "A", consistent(), per_dimension="A"),  # a wins
        pair("c2", "b", "a", "B", consistent(), per_dimension="A"),  # a wins; b wins correctness
        pair("c3", "a", "b", "TIE", [reading("j2", "TIE", "TIE")]),
        pair("c4", "b", "a", "A", consistent()),  # b wins
    ]
    report = build_report("s", [], agents=["a", "b"], pairwise=pairwise)
    [c] = report.comparisons
    assert (c.agent_a, c.agent_b, c.n_cases, c.n_pairwise) == ("a", "b", 0, 4)
    assert c.mcnemar is None and c.bootstrap is None
    overall, correctness = c.pairwise
    assert (overall.dimension, overall.n, overall.wins, overall.ties, overall.losses) == (
        "overall", 4, 2, 1, 1,
    )  # fmt: skip
    assert overall.win_rate == pytest.approx(0.625)
    assert (correctness.dimension, correctness.wins, correctness.losses) == ("correctness", 1, 1)
    assert c.position_bias_detected is False and report.position_bias_detected is False
    [j2] = report.judge_health
    assert j2.position is not None and j2.position.n == 4 and j2.position.consistent == 4
    assert not j2.bias_detected

    text = render_markdown(report)
    assert "## Pairwise (position-swapped)" in text
    assert "| a | b | overall | 4 | 2 | 1 | 1 | 62.5% | no |" in text


def test_a_judge_reading_first_first_is_flagged_and_the_pair_bias_propagates() -> None:
    steady = [pair(f"s{i}", "a", "b", "A", consistent()) for i in range(5)]
    biased = pair("c9", "a", "b", "A", [*consistent(), reading("j1", "FIRST", "FIRST")])
    report = build_report("s", [], agents=["a", "b"], pairwise=[*steady, biased])
    health = {h.judge: h for h in report.judge_health}
    j1, j2 = health["j1"], health["j2"]
    assert j1.position is not None
    assert (j1.position.n, j1.position.first_first, j1.position.position_consistency) == (1, 1, 0.0)
    assert j1.position.primacy_rate == 1.0 and j1.bias_detected
    assert j1.models == ("j1-2025",)
    assert j2.position is not None and j2.position.position_consistency == 1.0
    assert not j2.bias_detected
    [c] = report.comparisons
    assert c.pairwise[0].bias_detected
    assert c.position_bias_detected is True and report.position_bias_detected is True
    text = render_markdown(report)
    assert "Position bias detected: **yes**." in text
    assert "## Judge health" in text


def test_a_flagged_judge_alone_sets_position_bias() -> None:
    # j3 never picks the same slot twice, so no pair is biased, but its verdicts change with the
    # order (a win one way, a tie the other): position consistency 0 < 0.80 flags the judge, and
    # with it every comparison it judged
    pairs = [pair(f"c{i}", "a", "b", "TIE", [reading("j3", "FIRST", "TIE")]) for i in range(4)]
    report = build_report("s", [], agents=["a", "b"], pairwise=pairs)
    [j3] = report.judge_health
    assert j3.position is not None and j3.position.position_consistency == 0.0
    assert j3.position.first_first == 0 and j3.bias_detected
    [c] = report.comparisons
    assert not any(t.bias_detected for t in c.pairwise)
    assert c.position_bias_detected is True and report.position_bias_detected is True
