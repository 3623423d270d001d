"""The results of the pure statistics (`evals_pipeline.statistics`) that reports and run history
store: calibration, corrected rates, paired tests, position bias and repeated trials.

They live in models/ so the records that hold them (models.report, models.history) need nothing
outside models/; the functions that compute them stay in statistics/ (docs/statistics.md).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

CORRECTION_METHOD: Final = "rogan_gladen_1978+lang_reiczigel_2014"
"""The estimator a `CorrectedRate` names: Rogan-Gladen point, Lang-Reiczigel interval."""


class Calibration(BaseModel):
    """A judge's confusion matrix against human labels and the rates derived from it.

    Rates are None when their class (or, for κ, the chance agreement) leaves them undefined.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int
    fn: int
    tn: int
    fp: int
    m1: int
    m0: int
    tpr: float | None
    tnr: float | None
    youden: float | None
    cohen_kappa: float | None
    tpr_ci95: tuple[float, float]
    tnr_ci95: tuple[float, float]


class PairedTable(BaseModel):
    """The 2x2 table of per-case outcomes: a both pass, b A only, c B only, d both fail."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: int
    b: int
    c: int
    d: int


class McNemarResult(BaseModel):
    """McNemar exact and mid-p, the asymptotic χ² tests, and the paired difference Δ with its Wald CI.

    χ² fields are None with no discordant pairs; sd, se and the Wald bounds are None for N < 2.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: PairedTable
    n: int
    n_discordant: int
    statistic: int
    p_exact: float
    p_mid: float
    chi2: float | None
    chi2_p: float | None
    chi2_cc: float | None
    chi2_cc_p: float | None
    delta: float | None
    sd: float | None
    se: float | None
    wald_low: float | None
    wald_high: float | None


class BootstrapResult(BaseModel):
    """Percentile interval of mean_A - mean_B over case resamples, and P(Δ* ≤ 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    delta: float
    ci95_low: float
    ci95_high: float
    p_delta_le_zero: float
    n_cases: int
    n_resamples: int
    seed: int | None


class CorrectedRate(BaseModel):
    """A pass rate corrected for judge error, with its 95% interval and guard flags (§1, §8).

    `reason` says why `correction_valid` is False ("" otherwise); `warnings` holds "low-youden"
    (0 < J < J_WARN: noise amplified by 1/J) and "interval-undefined" (J > 0 but J̃ ≤ 0, tiny m).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dimension: str | None = None
    n: int
    observed_rate: float | None
    corrected_rate: float | None
    tpr: float | None
    tnr: float | None
    m1: int
    m0: int
    ci95_low: float
    ci95_high: float
    correction_valid: bool
    clipped: bool = False
    reason: str = ""
    warnings: tuple[str, ...] = ()
    method: Literal["rogan_gladen_1978+lang_reiczigel_2014"] = CORRECTION_METHOD


class PositionBias(BaseModel):
    """One judge's position statistics over a run of N valid swapped pairs (§5).

    Rates are None for N = 0; then nothing can be detected and `bias_detected` is False.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    consistent: int
    first_first: int
    second_second: int
    other: int
    position_consistency: float | None
    primacy_rate: float | None
    recency_rate: float | None
    positional_preference: float | None
    binomial_p: float
    bias_detected: bool


class RepeatedTrials(BaseModel):
    """Suite pass@k and pass^k at one k, over `n_cases` cases."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int
    pass_at_k: float
    pass_hat_k: float
    n_cases: int
