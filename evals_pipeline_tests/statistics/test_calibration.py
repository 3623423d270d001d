"""TPR/TNR from (judge, human) pairs, Cohen's κ, Wilson intervals and label allocation."""

from __future__ import annotations

import pytest

from evals_pipeline.statistics.calibration import (
    allocate_labels,
    calibrate,
    calibrate_by_dimension,
    calibration_from_counts,
    cohen_kappa,
    wilson_interval,
)
from evals_pipeline.statistics.rates import corrected_rate

TOL4 = 5e-5


def test_section4_k1_cohen_kappa() -> None:
    # §4 K1: TP 46, FN 4, TN 44, FP 6 → p_o 0.90, p_e 0.50, κ = 0.8000
    kappa = cohen_kappa(tp=46, fn=4, tn=44, fp=6)
    assert kappa is not None and abs(kappa - 0.8) < TOL4


def test_calibrate_from_pairs_reproduces_k1_and_feeds_section8_a() -> None:
    # §4 K1 and §8 A share the confusion matrix: tp/m1 = 46/50, tn/m0 = 44/50
    pairs = (
        [("PASS", "PASS")] * 46
        + [("FAIL", "PASS")] * 4
        + [("FAIL", "FAIL")] * 44
        + [("PASS", "FAIL")] * 6
    )
    cal = calibrate(pairs)  # type: ignore[arg-type]
    assert (cal.tp, cal.fn, cal.tn, cal.fp, cal.m1, cal.m0) == (46, 4, 44, 6, 50, 50)
    assert cal.tpr == 0.92 and cal.tnr == 0.88
    assert cal.youden is not None and abs(cal.youden - 0.8) < 1e-12
    assert cal.cohen_kappa is not None and abs(cal.cohen_kappa - 0.8) < TOL4
    rate = corrected_rate(400, 500, cal.tp, cal.m1, cal.tn, cal.m0)
    assert rate.corrected_rate is not None and abs(rate.corrected_rate - 0.85) < TOL4


def test_calibrate_accepts_blended_booleans() -> None:
    # §4 "calibrate the pipeline": the blended decision is a bool, the human label a verdict
    cal = calibrate(
        [(True, "PASS"), (False, "PASS"), (False, "FAIL"), (True, "FAIL"), (True, "FAIL")]
    )
    assert (cal.tp, cal.fn, cal.tn, cal.fp) == (1, 1, 1, 2)
    assert cal.tpr == 0.5 and cal.tnr == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [(46, 50, 0.8116, 0.9685), (44, 50, 0.7620, 0.9438)],  # §7 W1, W2
)
def test_section7_wilson(successes: int, trials: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(successes, trials)
    assert abs(lo - low) < TOL4 and abs(hi - high) < TOL4


def test_calibration_carries_wilson_intervals_for_tpr_and_tnr() -> None:
    # §7 W1/W2 on the K1 matrix
    cal = calibration_from_counts(46, 4, 44, 6)
    assert abs(cal.tpr_ci95[0] - 0.8116) < TOL4 and abs(cal.tnr_ci95[1] - 0.9438) < TOL4


@pytest.mark.parametrize(("successes", "trials"), [(0, 10), (10, 10), (0, 1)])
def test_wilson_stays_in_unit_interval_with_width(successes: int, trials: int) -> None:
    lo, hi = wilson_interval(successes, trials)
    assert 0.0 <= lo < hi <= 1.0


def test_wilson_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_section7_al1_label_allocation() -> None:
    # §7 AL1: m 200, p 0.4, TNR 0.7, TPR 0.9 → rho 3.0000, m1 55.585 → 56, m0 144
    alloc = allocate_labels(200, 0.4, tpr=0.9, tnr=0.7)
    assert abs(alloc.rho - 3.0) < TOL4
    assert abs(alloc.m1_exact - 55.585) < 5e-4
    assert (alloc.m1, alloc.m0) == (56, 144)


def test_allocation_clips_perfect_pilot_rates() -> None:
    # §7 "clip the pilot TPR below 1"; TNR likewise, so neither class gets the whole budget
    perfect_tpr = allocate_labels(100, 0.5, tpr=1.0, tnr=0.9)
    assert perfect_tpr.rho == pytest.approx(0.1 / 0.01)
    assert 0 < perfect_tpr.m1 < 100
    perfect_tnr = allocate_labels(100, 0.5, tpr=0.9, tnr=1.0)
    assert 0 < perfect_tnr.m0 < 100


def test_allocation_balances_when_errors_and_prevalence_are_symmetric() -> None:
    alloc = allocate_labels(100, 0.5, tpr=0.8, tnr=0.8)
    assert (alloc.m1, alloc.m0) == (50, 50)


@pytest.mark.parametrize(
    ("budget", "prevalence", "tpr", "tnr"),
    [(100, 0.0, 0.9, 0.9), (100, 1.2, 0.9, 0.9), (-1, 0.5, 0.9, 0.9), (100, 0.5, 1.1, 0.9)],
)
def test_allocation_rejects_bad_inputs(
    budget: int, prevalence: float, tpr: float, tnr: float
) -> None:
    with pytest.raises(ValueError):
        allocate_labels(budget, prevalence, tpr, tnr)


def test_empty_and_one_class_calibrations() -> None:
    empty = calibrate([])
    assert (
        empty.tpr is None
        and empty.tnr is None
        and empty.youden is None
        and empty.cohen_kappa is None
    )
    assert empty.tpr_ci95 == (0.0, 1.0)
    only_pass = calibrate([("PASS", "PASS"), ("FAIL", "PASS")])
    assert only_pass.tpr == 0.5 and only_pass.tnr is None and only_pass.youden is None


def test_kappa_undefined_when_chance_agreement_is_total() -> None:
    # judge and human both say PASS every time: p_e = 1, κ undefined rather than 0/0
    assert cohen_kappa(tp=10, fn=0, tn=0, fp=0) is None


def test_kappa_is_zero_at_chance_and_negative_below() -> None:
    assert cohen_kappa(tp=25, fn=25, tn=25, fp=25) == 0.0
    kappa = cohen_kappa(tp=0, fn=10, tn=0, fp=10)
    assert kappa is not None and kappa < 0


def test_calibrate_by_dimension_keeps_judges_apart() -> None:
    rows = [
        ("correctness", "PASS", "PASS"),
        ("correctness", "FAIL", "FAIL"),
        ("verification", "PASS", "FAIL"),
        ("verification", "PASS", "PASS"),
    ]
    by_dim = calibrate_by_dimension(rows)  # type: ignore[arg-type]
    assert set(by_dim) == {"correctness", "verification"}
    assert (by_dim["correctness"].tpr, by_dim["correctness"].tnr) == (1.0, 1.0)
    assert (by_dim["verification"].tpr, by_dim["verification"].tnr) == (1.0, 0.0)


def test_negative_counts_raise() -> None:
    with pytest.raises(ValueError):
        calibration_from_counts(-1, 0, 0, 0)
