"""Judged report: corrected pass rates (judging.md §8 example A), calibration against human
labels, and the Markdown "Judged dimensions" and "Calibration" sections that show them."""

from __future__ import annotations

import pytest

from evals_pipeline.models.judging import CaseJudgment
from evals_pipeline.reporting import HumanLabel, build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import ENVIRONMENTAL, judged, label

AGENT = "Claude Code"


def example_a() -> tuple[list[CaseJudgment], list[HumanLabel]]:
    """§8 example A: 400 of 500 judged trials pass; test labels tp 46/50, tn 44/50.

    Plus what must not count: 20 environmental failures (out of n), dev labels that disagree
    with every decision, a label on an environmental trial and one naming no trial.
    """
    judgments = [judged(AGENT, f"t{i:03}", [i < 400]) for i in range(500)]
    judgments += [judged(AGENT, f"env{i}", [False], failure=ENVIRONMENTAL) for i in range(20)]
    labels = (
        [label(f"t{i:03}", "PASS") for i in range(46)]  # judge PASS, human PASS: tp
        + [label(f"t{i:03}", "PASS") for i in range(400, 404)]  # judge FAIL, human PASS: fn
        + [label(f"t{i:03}", "FAIL") for i in range(404, 448)]  # judge FAIL, human FAIL: tn
        + [label(f"t{i:03}", "FAIL") for i in range(46, 52)]  # judge PASS, human FAIL: fp
        + [label(f"t{i:03}", "FAIL", split="dev") for i in range(100, 130)]
        + [label("env0", "FAIL"), label("nowhere", "PASS")]
    )
    return judgments, labels


def test_rates_reproduce_example_a_with_the_test_split_and_without_environmental_trials() -> None:
    judgments, labels = example_a()
    report = build_report("s", [], agents=[AGENT], judgments=judgments, labels=labels)
    [rate] = report.rates
    assert (rate.agent, rate.dimension, rate.n, rate.n_passed) == (AGENT, "correctness", 500, 400)
    assert rate.n_environmental == 20
    assert (rate.m1, rate.m0) == (50, 50)
    assert rate.observed_rate == pytest.approx(0.8, abs=5e-5)
    assert rate.tpr == pytest.approx(0.92, abs=5e-5)
    assert rate.tnr == pytest.approx(0.88, abs=5e-5)
    assert rate.corrected_rate == pytest.approx(0.85, abs=5e-5)
    assert rate.ci95_low == pytest.approx(0.7686, abs=5e-5)
    assert rate.ci95_high == pytest.approx(0.9728, abs=5e-5)
    assert rate.correction_valid and not rate.clipped and rate.reason == ""
    assert rate.method == "rogan_gladen_1978+lang_reiczigel_2014"

    cal = report.calibration
    assert cal is not None
    assert (cal.split, cal.labels_total, cal.labels_in_split) == ("test", 132, 102)
    assert (cal.labels_used, cal.unmatched, cal.environmental) == (100, 1, 1)
    [dim] = cal.dimensions
    assert (dim.tp, dim.fn, dim.tn, dim.fp) == (46, 4, 44, 6)
    assert dim.tpr_ci95 == pytest.approx((0.8116, 0.9685), abs=5e-5)  # W1
    assert dim.tnr_ci95 == pytest.approx((0.7620, 0.9438), abs=5e-5)  # W2
    assert dim.kappa == pytest.approx(0.8, abs=5e-5)  # K1
    assert dim.warnings == ()


def test_without_splits_every_label_counts() -> None:
    judgments, _ = example_a()
    labels = [label(f"t{i:03}", "PASS", split=None) for i in range(50)]
    labels += [label(f"t{i:03}", "FAIL", split=None) for i in range(400, 450)]
    report = build_report("s", [], agents=[AGENT], judgments=judgments, labels=labels)
    assert report.calibration is not None and report.calibration.split == "all"
    [rate] = report.rates
    assert (rate.tpr, rate.tnr, rate.corrected_rate) == (1.0, 1.0, 0.8)


def test_without_labels_the_correction_is_not_valid_and_says_why() -> None:
    judgments, labels = example_a()
    [rate] = build_report("s", [], agents=[AGENT], judgments=judgments).rates
    assert rate.observed_rate == pytest.approx(0.8)
    assert rate.corrected_rate is None and not rate.correction_valid
    assert (rate.reason, rate.ci95_low, rate.ci95_high) == ("no-calibration-file", 0.0, 1.0)
    assert rate.n == 500  # environmental trials are still excluded

    other = [judged(AGENT, "v", [True], name="verification")]
    report = build_report("s", [], agents=[AGENT], judgments=judgments + other, labels=labels)
    by_dimension = {r.dimension: r for r in report.rates}
    assert list(by_dimension) == ["correctness", "verification"]
    assert by_dimension["correctness"].correction_valid
    verification = by_dimension["verification"]
    assert not verification.correction_valid
    assert verification.reason == "no-labels-for-dimension"
    assert verification.corrected_rate is None and verification.observed_rate == 1.0


def test_undecided_dimensions_leave_n_and_one_class_of_labels_is_not_enough() -> None:
    judgments = [judged("a", "t1", [True, None, False])]
    labels = [label("t1", "PASS", agent="a")]
    [rate] = build_report("s", [], agents=["a"], judgments=judgments, labels=labels).rates
    assert (rate.n, rate.n_passed, rate.n_undecided) == (2, 1, 1)
    assert rate.reason == "no-calibration-for-a-class" and rate.m0 == 0


def test_markdown_shows_the_judged_dimensions_with_the_corrected_numbers() -> None:
    judgments, labels = example_a()
    report = build_report(
        "s", [], agents=[AGENT], judgments=judgments, labels=labels, labels_source="labels.csv"
    )
    lines = render_markdown(report).splitlines()
    start = lines.index("## Judged dimensions")
    assert "test split" in lines[start + 2]
    assert lines[start + 4] == (
        "| agent | dimension | n | observed | corrected | 95% CI | TPR | TNR | valid |"
    )
    assert lines[start + 6] == (
        "| Claude Code | correctness | 500 | 80.0% | 85.0% | [76.9%, 97.3%] | 92.0% | 88.0% | yes |"
    )
    assert "## Calibration" in lines
    assert any(
        line.startswith("100 of 132 labels used from `labels.csv` (test split: 102;")
        for line in lines
    )
    assert (
        "| correctness | 100 | 50 | 50 | 92.0% [81.2%, 96.8%] | 88.0% [76.2%, 94.4%] | 0.800 | - |"
        in lines
    )


def test_markdown_without_labels_says_the_correction_needs_them() -> None:
    report = build_report("s", [], agents=["a"], judgments=[judged("a", "t", [True, False])])
    text = render_markdown(report)
    assert "no calibration file" in text
    assert "| a | correctness | 2 | 50.0% | - | - | - | - | no: no-calibration-file |" in text
    assert "## Calibration" not in text


def test_markdown_leaves_out_agents_with_no_judged_trial() -> None:
    judgments = [judged("a", "t", [True, False])]
    judgments += [judged("b", "t", [False], failure=ENVIRONMENTAL)]  # n = 0: nothing to rate
    report = build_report("s", [], agents=["a", "b"], judgments=judgments)
    assert [(r.agent, r.n, r.n_environmental) for r in report.rates] == [("a", 2, 0), ("b", 0, 1)]
    lines = render_markdown(report).splitlines()
    start = lines.index("## Judged dimensions")
    rows = [line for line in lines[start + 6 :] if line.startswith("| ")]
    assert rows[0].startswith("| a | correctness | 2 |")
    assert not any(line.startswith("| b |") for line in rows)

    only_environmental = build_report("s", [], agents=["b"], judgments=judgments[1:])
    assert "## Judged dimensions" not in render_markdown(only_environmental)
