"""Judge-error-corrected pass rates: Rogan-Gladen point, Lang-Reiczigel interval (judging.md §8).

An LLM judge with imperfect TPR/TNR biases the observed rate; inverting
E[p_obs] = θ·TPR + (1 - θ)(1 - TNR) removes the bias, and the interval carries the uncertainty of
both the judged set and the calibration set.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Final

from pydantic import BaseModel, ConfigDict

from evals_pipeline.models.statistics import CORRECTION_METHOD, CorrectedRate
from evals_pipeline.statistics.distributions import Z95

METHOD: Final = CORRECTION_METHOD
J_WARN: Final = 0.2
"""Youden index below which the correction is reported with a noise warning (§0, a design choice)."""


class LangReiczigelTerms(BaseModel):
    """The intermediates of the Lang-Reiczigel interval (§8 table "Intermediates").

    `theta_tilde`, `delta` and `se` are None when J̃ ≤ 0; the interval is then [0, 1].
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    p_tilde: float
    q1_tilde: float
    q0_tilde: float
    j_tilde: float
    theta_tilde: float | None
    delta: float | None
    se: float | None
    ci95_low: float
    ci95_high: float


def rogan_gladen(k: int, n: int, tp: int, m1: int, tn: int, m0: int) -> Fraction | None:
    """Unclipped θ_raw = (p_obs + TNR - 1)/J, exactly; None when n, m1 or m0 is 0 or J ≤ 0.

    Exact rationals make the J ≤ 0 guard and the `clipped` flag exact decisions, not float
    comparisons near 0 and 1.
    """
    _check_inputs(k, n, tp, m1, tn, m0)
    if n == 0 or m1 == 0 or m0 == 0:
        return None
    tnr = Fraction(tn, m0)
    youden = Fraction(tp, m1) + tnr - 1
    if youden <= 0:
        return None
    return (Fraction(k, n) + tnr - 1) / youden


def lang_reiczigel_terms(
    k: int, n: int, tp: int, m1: int, tn: int, m0: int, *, z: float = Z95
) -> LangReiczigelTerms:
    """The adjusted-Wald interval of Lang & Reiczigel (2014) with its intermediates.

    Pseudo-counts (z²/2 on the judged set, 1 on each calibration class) plus the bias shift Δ;
    the bounds are clipped to [0, 1].
    """
    _check_inputs(k, n, tp, m1, tn, m0)
    z2 = z * z
    n_t = n + z2
    p_t = (k + z2 / 2) / n_t
    m1_t, m0_t = m1 + 2, m0 + 2
    q1_t, q0_t = (tp + 1) / m1_t, (tn + 1) / m0_t
    j_t = q1_t + q0_t - 1
    if j_t <= 0:
        return LangReiczigelTerms(
            p_tilde=p_t, q1_tilde=q1_t, q0_tilde=q0_t, j_tilde=j_t,
            theta_tilde=None, delta=None, se=None, ci95_low=0.0, ci95_high=1.0,
        )  # fmt: skip
    theta_t = (p_t + q0_t - 1) / j_t
    var1 = q1_t * (1 - q1_t) / m1_t
    var0 = q0_t * (1 - q0_t) / m0_t
    delta = 2 * z2 * (theta_t * var1 - (1 - theta_t) * var0)
    se = math.sqrt(p_t * (1 - p_t) / n_t + theta_t**2 * var1 + (1 - theta_t) ** 2 * var0) / j_t
    centre = theta_t + delta
    return LangReiczigelTerms(
        p_tilde=p_t, q1_tilde=q1_t, q0_tilde=q0_t, j_tilde=j_t, theta_tilde=theta_t,
        delta=delta, se=se, ci95_low=_clip01(centre - z * se), ci95_high=_clip01(centre + z * se),
    )  # fmt: skip


def delta_method_interval(
    k: int, n: int, tp: int, m1: int, tn: int, m0: int, *, z: float = Z95
) -> tuple[float, float] | None:
    """Plain delta-method Wald interval around θ_raw, clipped: a comparison baseline only.

    §8 forbids reporting it (it under-covers at small m and collapses at TPR or TNR = 1); it is
    here so judge health can show how much the Lang-Reiczigel adjustment widens the interval.
    None where Rogan-Gladen is undefined.
    """
    theta = rogan_gladen(k, n, tp, m1, tn, m0)
    if theta is None:
        return None
    p, q1, q0, t = k / n, tp / m1, tn / m0, float(theta)
    var = p * (1 - p) / n + t**2 * q1 * (1 - q1) / m1 + (1 - t) ** 2 * q0 * (1 - q0) / m0
    half = z * math.sqrt(var) / (q1 + q0 - 1)
    return _clip01(t - half), _clip01(t + half)


def corrected_rate(
    k: int,
    n: int,
    tp: int,
    m1: int,
    tn: int,
    m0: int,
    *,
    dimension: str | None = None,
    j_warn: float = J_WARN,
) -> CorrectedRate:
    """The corrected rate of k judge-PASS among n judged trials, given tp/m1 and tn/m0 on the test split.

    Guards (§8, normative): n = 0, m1 = 0 or m0 = 0, or J ≤ 0 → corrected_rate None, interval
    [0, 1], correction_valid False; the judge is never inverted when no better than chance.
    The reported point is the clipped θ_raw; θ̃ is only the interval's centre.
    """
    _check_inputs(k, n, tp, m1, tn, m0)

    def result(point: float | None, ci: tuple[float, float], **flags: object) -> CorrectedRate:
        return CorrectedRate.model_validate(
            {
                "dimension": dimension, "n": n, "m1": m1, "m0": m0,
                "observed_rate": k / n if n else None,
                "tpr": tp / m1 if m1 else None, "tnr": tn / m0 if m0 else None,
                "corrected_rate": point, "ci95_low": ci[0], "ci95_high": ci[1],
            }
            | flags
        )  # fmt: skip

    if n == 0:
        return result(None, (0.0, 1.0), correction_valid=False, reason="no-judged-trials")
    if m1 == 0 or m0 == 0:
        return result(None, (0.0, 1.0), correction_valid=False, reason="no-calibration-for-a-class")
    youden = Fraction(tp, m1) + Fraction(tn, m0) - 1
    if youden <= 0:
        return result(
            None, (0.0, 1.0), correction_valid=False, reason="judge-no-better-than-chance"
        )
    theta = rogan_gladen(k, n, tp, m1, tn, m0)
    assert theta is not None  # the guards above are exactly rogan_gladen's None cases
    warnings: list[str] = []
    if youden < j_warn:
        warnings.append("low-youden")
    terms = lang_reiczigel_terms(k, n, tp, m1, tn, m0)
    if terms.theta_tilde is None:
        warnings.append("interval-undefined")
    return result(
        float(min(Fraction(1), max(Fraction(0), theta))),
        (terms.ci95_low, terms.ci95_high),
        correction_valid=True,
        clipped=not 0 <= theta <= 1,
        warnings=tuple(warnings),
    )


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _check_inputs(k: int, n: int, tp: int, m1: int, tn: int, m0: int) -> None:
    for part, whole, names in ((k, n, "k/n"), (tp, m1, "tp/m1"), (tn, m0, "tn/m0")):
        if whole < 0 or not 0 <= part <= whole:
            raise ValueError(f"{names} must satisfy 0 ≤ part ≤ whole, got {part}/{whole}")
