"""Report: repeated trials (pass@k and pass^k, PK) and the paired comparison of two agents
(McNemar and the seeded bootstrap, MN), in the report and its Markdown."""

from __future__ import annotations

import pytest

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.reporting import build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import graded


def test_repeated_trials_pk_errors_count_as_failures() -> None:
    grades = [
        graded("a", "c5", ["pass"] * 5),
        graded("a", "c4", ["pass", "pass", "fail", "pass", "pass"]),
        graded("a", "c2", ["error", "pass", "fail", "pass", "fail"]),
        graded("a", "c0", ["fail", "error", "fail", "fail", "fail"]),
        graded("b", "c5", ["pass", "pass"]),
        graded("b", "c4", ["pass"]),
    ]
    report = build_report("s", grades, agents=["a", "b"])
    a, b = report.repeated_trials
    assert (a.agent, a.n_cases, a.trials_per_case) == ("a", 4, 5)
    by_k = {v.k: (v.pass_at_k, v.pass_hat_k) for v in a.values}
    assert list(by_k) == [1, 2, 3, 4, 5]
    for k, (at, hat) in {
        1: (0.55, 0.55),
        2: (0.675, 0.425),
        3: (0.725, 0.35),
        5: (0.75, 0.25),
    }.items():
        assert by_k[k] == pytest.approx((at, hat), abs=5e-5)
    assert b.values == () and b.reason == "uneven trials per case (1, 2)"
    text = render_markdown(report)
    assert "## Repeated trials" in text
    assert "| a | 4 | 2 | 67.5% | 42.5% |" in text
    assert "- b: no pass@k, uneven trials per case (1, 2)" in text


def mn_grades() -> list[CaseGrade]:
    """Vector MN: 50 cases, a 20 both pass, b 11 A only, c 3 B only, d 16 both fail."""
    outcomes = [("pass", "pass")] * 20 + [("pass", "fail")] * 11
    outcomes += [("fail", "pass")] * 3 + [("fail", "fail")] * 16
    grades = []
    for i, (x, y) in enumerate(outcomes):
        grades += [graded("A", f"c{i:02}", [x]), graded("B", f"c{i:02}", [y])]
    return [*grades, graded("A", "only-a", ["pass"])]  # not shared: left out


def test_mcnemar_mn_through_the_report() -> None:
    report = build_report("s", mn_grades(), agents=["A", "B"])
    [c] = report.comparisons
    assert (c.agent_a, c.agent_b, c.n_cases) == ("A", "B", 50)
    m = c.mcnemar
    assert m is not None
    assert (m.table.a, m.table.b, m.table.c, m.table.d) == (20, 11, 3, 16)
    assert m.p_exact == pytest.approx(940 / 16384, abs=5e-7)
    assert m.p_mid == pytest.approx(576 / 16384, abs=5e-7)
    assert m.delta == pytest.approx(0.16, abs=5e-5)
    assert m.se == pytest.approx(0.072054, abs=5e-7)
    assert (m.wald_low, m.wald_high) == pytest.approx((0.0188, 0.3012), abs=5e-5)
    boot = c.bootstrap
    assert boot is not None
    assert (boot.n_resamples, boot.seed, report.bootstrap_seed) == (10_000, 12345, 12345)
    assert boot.ci95_low == pytest.approx(0.02, abs=0.02)
    assert boot.ci95_high == pytest.approx(0.30, abs=0.02)
    assert boot.p_delta_le_zero == pytest.approx(0.018, abs=0.02)
    assert c.pairwise == [] and c.position_bias_detected is None
    assert report.position_bias_detected is None
    again = build_report("s", mn_grades(), agents=["A", "B"])
    assert again.comparisons[0].bootstrap == boot  # seeded: the same numbers every time

    text = render_markdown(report)
    assert "## Paired comparison" in text
    assert "seed 12345" in text
    row = next(line for line in text.splitlines() if line.startswith("| A | B | 50 |"))
    assert "| 20 / 11 / 3 / 16 | +0.160 | [+0.019, +0.301] |" in row
    assert row.endswith("| 0.0352 | 0.0574 |")
