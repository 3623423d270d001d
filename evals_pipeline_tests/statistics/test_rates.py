"""Rogan-Gladen corrected rates, the Lang-Reiczigel interval and the §8 guards."""

from __future__ import annotations

import json

import pytest

from evals_pipeline.statistics.rates import (
    CorrectedRate,
    corrected_rate,
    delta_method_interval,
    lang_reiczigel_terms,
    rogan_gladen,
)

# §0 tolerances: 4 decimals → 5e-5, 6 decimals → 5e-7.
TOL4, TOL6 = 5e-5, 5e-7

# §8 main table: id, (k, n, tp, m1, tn, m0), observed, TPR, TNR, θ_raw, corrected, low, high, clipped, valid.
MAIN = [
    ("A", (400, 500, 46, 50, 44, 50), 0.8, 0.92, 0.88, 0.85, 0.85, 0.7686, 0.9728, False, True),
    (
        "B",
        (400, 1000, 180, 200, 140, 200),
        0.4,
        0.9,
        0.7,
        0.1667,
        0.1667,
        0.0564,
        0.2627,
        False,
        True,
    ),
    ("C", (5, 100, 34, 40, 36, 40), 0.05, 0.85, 0.9, -0.0667, 0.0, 0.0, 0.0664, True, True),
    ("D", (30, 60, 10, 20, 9, 20), 0.5, 0.5, 0.45, None, None, 0.0, 1.0, False, False),
    ("E", (70, 100, 50, 50, 50, 50), 0.7, 1.0, 1.0, 0.7, 0.7, 0.6045, 0.7983, False, True),
]

# §8 intermediates (6 decimals) and the unadjusted delta-method CI (4 decimals).
# id: p̃, q̃1, q̃0, J̃, θ̃, Δ, SE, delta-method CI
INTERMEDIATES = [
    ("A", 0.797713, 0.903846, 0.865385, 0.769231, 0.862027, 0.008694, 0.052079, (0.7573, 0.9427)),
    ("B", 0.400383, 0.896040, 0.698020, 0.594059, 0.165644, -0.006102, 0.052650, (0.0643, 0.2690)),
    ("C", 0.066647, 0.833333, 0.880952, 0.714286, -0.073361, -0.022456, 0.082750, (0.0, 0.0776)),
    ("D", 0.5, 0.5, 0.454545, -0.045455, None, None, None, None),
    ("E", 0.692601, 0.980769, 0.980769, 0.961538, 0.700305, 0.001116, 0.049449, (0.6102, 0.7898)),
]
INPUTS = {row[0]: row[1] for row in MAIN}


def _close(actual: float | None, expected: float | None, tol: float) -> bool:
    if expected is None:
        return actual is None
    return actual is not None and abs(actual - expected) < tol


@pytest.mark.parametrize(
    (
        "vid",
        "counts",
        "observed",
        "tpr",
        "tnr",
        "theta_raw",
        "corrected",
        "low",
        "high",
        "clipped",
        "valid",
    ),
    MAIN,
    ids=[row[0] for row in MAIN],
)
def test_section8_main_table(
    vid: str,
    counts: tuple[int, int, int, int, int, int],
    observed: float,
    tpr: float,
    tnr: float,
    theta_raw: float | None,
    corrected: float | None,
    low: float,
    high: float,
    clipped: bool,
    valid: bool,
) -> None:
    # §8 vectors A-E
    rate = corrected_rate(*counts)
    assert _close(rate.observed_rate, observed, TOL4)
    assert _close(rate.tpr, tpr, TOL4)
    assert _close(rate.tnr, tnr, TOL4)
    raw = rogan_gladen(*counts)
    assert _close(None if raw is None else float(raw), theta_raw, TOL4)
    assert _close(rate.corrected_rate, corrected, TOL4)
    assert abs(rate.ci95_low - low) < TOL4
    assert abs(rate.ci95_high - high) < TOL4
    assert rate.clipped is clipped
    assert rate.correction_valid is valid
    assert (rate.reason == "") is valid
    assert rate.n == counts[1] and rate.m1 == counts[3] and rate.m0 == counts[5]


@pytest.mark.parametrize(
    ("vid", "p_t", "q1_t", "q0_t", "j_t", "theta_t", "delta", "se", "wald"),
    INTERMEDIATES,
    ids=[row[0] for row in INTERMEDIATES],
)
def test_section8_intermediates(
    vid: str,
    p_t: float,
    q1_t: float,
    q0_t: float,
    j_t: float,
    theta_t: float | None,
    delta: float | None,
    se: float | None,
    wald: tuple[float, float] | None,
) -> None:
    # §8 "Intermediates (6 decimals)" and the delta-method column (4 decimals)
    terms = lang_reiczigel_terms(*INPUTS[vid])
    assert abs(terms.p_tilde - p_t) < TOL6
    assert abs(terms.q1_tilde - q1_t) < TOL6
    assert abs(terms.q0_tilde - q0_t) < TOL6
    assert abs(terms.j_tilde - j_t) < TOL6
    assert _close(terms.theta_tilde, theta_t, TOL6)
    assert _close(terms.delta, delta, TOL6)
    assert _close(terms.se, se, TOL6)
    unadjusted = delta_method_interval(*INPUTS[vid])
    if wald is None:
        assert unadjusted is None
    else:
        assert unadjusted is not None
        assert abs(unadjusted[0] - wald[0]) < TOL4 and abs(unadjusted[1] - wald[1]) < TOL4


def test_tpr_tnr_one_gives_the_observed_rate_with_a_nonzero_width() -> None:
    # §8 guard row "TPR = TNR = 1 → = p_obs, width > 0" (vector E)
    rate = corrected_rate(70, 100, 50, 50, 50, 50)
    assert rate.corrected_rate == rate.observed_rate == 0.7
    assert rate.ci95_high - rate.ci95_low > 0.15


def test_section11_serialized_example_a() -> None:
    # §11: the JSON of example A (our model adds `reason` and `warnings`)
    rate = corrected_rate(400, 500, 46, 50, 44, 50, dimension="correctness")
    dumped = json.loads(rate.model_dump_json())
    expected = {
        "dimension": "correctness", "n": 500, "observed_rate": 0.8, "corrected_rate": 0.85,
        "tpr": 0.92, "tnr": 0.88, "m1": 50, "m0": 50, "ci95_low": 0.7686, "ci95_high": 0.9728,
        "correction_valid": True, "clipped": False, "method": "rogan_gladen_1978+lang_reiczigel_2014",
    }  # fmt: skip
    for key, value in expected.items():
        if isinstance(value, float):
            assert abs(dumped[key] - value) < TOL4, key
        else:
            assert dumped[key] == value, key
    assert dumped["reason"] == "" and dumped["warnings"] == []
    assert CorrectedRate.model_validate_json(rate.model_dump_json()) == rate


# §7 interval width vs m per class: k/n = 400/500, tp = round(0.92 m), tn = round(0.88 m); tol 5e-4.
WIDTHS = [
    (30, 500, 0.253),
    (50, 500, 0.204),
    (100, 500, 0.152),
    (200, 500, 0.122),
    (500, 500, 0.102),
    (50, 10_000, 0.184),
]


@pytest.mark.parametrize(("m", "n", "width"), WIDTHS)
def test_section7_interval_width_vs_calibration_size(m: int, n: int, width: float) -> None:
    rate = corrected_rate(n * 4 // 5, n, round(0.92 * m), m, round(0.88 * m), m)
    assert abs((rate.ci95_high - rate.ci95_low) - width) < 5e-4


@pytest.mark.parametrize(
    ("counts", "reason", "observed"),
    [
        ((0, 0, 46, 50, 44, 50), "no-judged-trials", None),  # n == 0
        ((5, 10, 0, 0, 44, 50), "no-calibration-for-a-class", 0.5),  # m1 == 0
        ((5, 10, 46, 50, 0, 0), "no-calibration-for-a-class", 0.5),  # m0 == 0
        ((5, 10, 5, 10, 5, 10), "judge-no-better-than-chance", 0.5),  # J == 0 exactly
        ((30, 60, 10, 20, 9, 20), "judge-no-better-than-chance", 0.5),  # J < 0 (vector D)
    ],
)
def test_guards_never_invert(
    counts: tuple[int, int, int, int, int, int], reason: str, observed: float | None
) -> None:
    # §8 edge cases and guards (normative)
    rate = corrected_rate(*counts)
    assert rate.corrected_rate is None
    assert (rate.ci95_low, rate.ci95_high) == (0.0, 1.0)
    assert rate.correction_valid is False
    assert rate.reason == reason
    assert rate.observed_rate == observed
    assert rogan_gladen(*counts) is None


def test_missing_class_keeps_the_other_rate() -> None:
    rate = corrected_rate(5, 10, 0, 0, 44, 50)
    assert rate.tpr is None and rate.tnr == 0.88


def test_positive_youden_with_undefined_interval() -> None:
    # §8 "J > 0, J̃ ≤ 0 (tiny m)": tp/m1 = 1/1, tn/m0 = 10/100 → J = 0.1, J̃ = 2/3 + 11/102 - 1 < 0
    rate = corrected_rate(5, 10, 1, 1, 10, 100)
    assert rate.correction_valid is True
    assert (rate.ci95_low, rate.ci95_high) == (0.0, 1.0)
    assert rate.corrected_rate == 0.0 and rate.clipped is True  # θ_raw = (0.5 + 0.1 - 1)/0.1 = -4
    assert rate.warnings == ("low-youden", "interval-undefined")
    assert lang_reiczigel_terms(5, 10, 1, 1, 10, 100).theta_tilde is None


def test_low_youden_warns_but_corrects() -> None:
    # §8 "0 < J < 0.2": J = 0.6 + 0.55 - 1 = 0.15
    rate = corrected_rate(50, 100, 60, 100, 55, 100)
    assert rate.correction_valid is True
    assert rate.warnings == ("low-youden",)
    assert abs(rate.corrected_rate - (0.5 + 0.55 - 1) / 0.15) < 1e-12  # type: ignore[operator]


def test_clipped_above_one() -> None:
    # θ_raw = (0.95 + 0.8 - 1)/0.7 > 1 → corrected 1.0, clipped alarm
    rate = corrected_rate(95, 100, 90, 100, 80, 100)
    assert rate.corrected_rate == 1.0 and rate.clipped is True


def test_exact_one_is_not_flagged_clipped() -> None:
    # θ_raw is exactly 1 (p_obs = TPR): on the boundary, not outside it
    rate = corrected_rate(9, 10, 9, 10, 7, 10)
    assert rate.corrected_rate == 1.0 and rate.clipped is False


@pytest.mark.parametrize(
    "counts", [(11, 10, 1, 1, 1, 1), (1, 1, 2, 1, 1, 1), (1, 1, 1, 1, -1, 1), (-1, 1, 1, 1, 1, 1)]
)
def test_impossible_counts_raise(counts: tuple[int, int, int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        corrected_rate(*counts)


def test_model_is_frozen_and_strict() -> None:
    rate = corrected_rate(400, 500, 46, 50, 44, 50)
    with pytest.raises(ValueError):
        rate.n = 1  # type: ignore[misc]
    with pytest.raises(ValueError):
        CorrectedRate.model_validate({**rate.model_dump(), "extra": 1})


def test_exact_zero_is_not_flagged_clipped() -> None:
    # θ_raw is exactly 0 (p_obs = 1 - TNR): the false-pass rate alone explains every PASS
    rate = corrected_rate(12, 100, 45, 50, 44, 50)
    assert rate.corrected_rate == 0.0 and rate.clipped is False
