"""Paired comparison of two agents on the same cases: McNemar and a paired bootstrap (judging.md §10).

Pair by case so case difficulty cancels; with several trials per case, the bootstrap resamples
whole cases (their per-case mean success) because trials of one case are not independent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from typing import TYPE_CHECKING

from evals_pipeline.models.statistics import BootstrapResult, McNemarResult, PairedTable
from evals_pipeline.statistics.distributions import (
    Z95,
    chi2_sf_df1,
    half_binomial_cdf,
    half_binomial_pmf,
)

if TYPE_CHECKING:
    import numpy as np


def paired_table(passed_a: Sequence[bool], passed_b: Sequence[bool]) -> PairedTable:
    """Count the 2x2 table from per-case binary outcomes of A and B, in the same case order."""
    if len(passed_a) != len(passed_b):
        raise ValueError(
            f"paired outcomes need equal lengths, got {len(passed_a)}, {len(passed_b)}"
        )
    pairs = list(zip(passed_a, passed_b, strict=True))
    return PairedTable(
        a=sum(x and y for x, y in pairs),
        b=sum(x and not y for x, y in pairs),
        c=sum(y and not x for x, y in pairs),
        d=sum(not x and not y for x, y in pairs),
    )


def mcnemar(table: PairedTable, *, z: float = Z95) -> McNemarResult:
    """McNemar's exact test (McNemar 1947) with the mid-p (Fagerland et al. 2013), χ² and Wald Δ.

    mid-p subtracts the point probability from the *unclipped* doubled tail, so b = c gives 1.0,
    not 0.7539. The continuity-corrected χ² uses max(0, |b - c| - 1)² so it never exceeds the
    uncorrected one (the spec's literal (|b - c| - 1)² would give 1/n_d at b = c).
    """
    a, b, c, d = table.a, table.b, table.c, table.d
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be ≥ 0, got {table}")
    n, n_d, s = a + b + c + d, b + c, min(b, c)
    doubled_tail = 2 * half_binomial_cdf(s, n_d)
    p_exact = float(min(Fraction(1), doubled_tail))
    p_mid = float(min(Fraction(1), doubled_tail - half_binomial_pmf(s, n_d)))
    chi2 = chi2_cc = None
    if n_d:
        chi2 = (b - c) ** 2 / n_d
        chi2_cc = max(0, abs(b - c) - 1) ** 2 / n_d
    delta = sd = se = low = high = None
    if n:
        delta = (b - c) / n
    if n >= 2 and delta is not None:
        # d_i is +1 (b cases), -1 (c cases), 0 otherwise, so Σd² = n_d and Σd = nΔ.
        sd = math.sqrt(max(0.0, (n_d - n * delta**2) / (n - 1)))
        se = sd / math.sqrt(n)
        low, high = delta - z * se, delta + z * se
    return McNemarResult(
        table=table, n=n, n_discordant=n_d, statistic=s, p_exact=p_exact, p_mid=p_mid,
        chi2=chi2, chi2_p=None if chi2 is None else chi2_sf_df1(chi2),
        chi2_cc=chi2_cc, chi2_cc_p=None if chi2_cc is None else chi2_sf_df1(chi2_cc),
        delta=delta, sd=sd, se=se, wald_low=low, wald_high=high,
    )  # fmt: skip


RESAMPLE_CELLS = 2_000_000
"""Case indices drawn per block of resamples: 10,000 resamples of 10,000 cases come in blocks of
16 MB rather than 800 MB at once (the draws are the same either way)."""


def paired_bootstrap(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    *,
    seed: int,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired case bootstrap (Efron & Tibshirani 1993) by the spec's procedure: the indices of
    `numpy.random.default_rng(seed).integers(0, N, size=(n_resamples, N))`, drawn in blocks,
    each row's `mean_A - mean_B`, numpy's percentiles; the seed is recorded. Vectorized: 10,000
    resamples of 10,000 cases take about a second, not a minute of Python loops.

    Scores are per-case mean successes in the same case order.
    """
    n = _check_scores(scores_a, scores_b)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be ≥ 1, got {n_resamples}")
    _check_confidence(confidence)
    # numpy loads with the first bootstrap: the models here are read by every report and run.
    import numpy as np

    rng = np.random.default_rng(seed)
    # A row's mean_A - mean_B as the mean of its paired differences: one gather, not two.
    differences = np.asarray(scores_a, dtype=float) - np.asarray(scores_b, dtype=float)
    deltas = np.empty(n_resamples)
    rows = max(1, RESAMPLE_CELLS // n)

    def means(start: int, idx: np.ndarray) -> None:
        deltas[start : start + len(idx)] = differences[idx].mean(axis=1)

    # numpy lets go of the GIL in both: a block's means are taken on a second thread while the
    # next block is drawn (the draws, in order, stay on this one): ~0.6 s instead of ~0.9 s.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bootstrap") as pool:
        taken: Future[None] | None = None
        for start in range(0, n_resamples, rows):
            idx = rng.integers(0, n, size=(min(rows, n_resamples - start), n))
            if taken is not None:
                taken.result()
            taken = pool.submit(means, start, idx)
        if taken is not None:
            taken.result()
    deltas.sort()
    result = _result(scores_a, scores_b, deltas.tolist(), confidence)
    return result.model_copy(update={"seed": seed})


def bootstrap_from_indices(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    resamples: Iterable[Sequence[int]],
    *,
    confidence: float = 0.95,
) -> BootstrapResult:
    """The bootstrap statistics for given resamples of case indices (one row per resample).

    Percentiles interpolate linearly between order statistics, as `numpy.percentile` does.
    """
    _check_scores(scores_a, scores_b)
    _check_confidence(confidence)
    deltas = sorted(
        math.fsum(scores_a[i] for i in row) / len(row)
        - math.fsum(scores_b[i] for i in row) / len(row)
        for row in resamples
    )
    return _result(scores_a, scores_b, deltas, confidence)


def _result(
    scores_a: Sequence[float], scores_b: Sequence[float], deltas: list[float], confidence: float
) -> BootstrapResult:
    """The statistics of sorted resampled deltas."""
    if not deltas:
        raise ValueError("the bootstrap needs at least one resample")
    n = len(scores_a)
    tail = (1 - confidence) / 2
    return BootstrapResult(
        delta=math.fsum(scores_a) / n - math.fsum(scores_b) / n,
        ci95_low=percentile(deltas, tail),
        ci95_high=percentile(deltas, 1 - tail),
        p_delta_le_zero=sum(x <= 0 for x in deltas) / len(deltas),
        n_cases=n,
        n_resamples=len(deltas),
        seed=None,
    )


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) of sorted values, linear interpolation (numpy's default method)."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 1:
        raise ValueError(f"q must be in [0, 1], got {q}")
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def _check_scores(scores_a: Sequence[float], scores_b: Sequence[float]) -> int:
    if len(scores_a) != len(scores_b):
        raise ValueError(f"paired scores need equal lengths, got {len(scores_a)}, {len(scores_b)}")
    if not scores_a:
        raise ValueError("the bootstrap needs at least one case")
    return len(scores_a)
