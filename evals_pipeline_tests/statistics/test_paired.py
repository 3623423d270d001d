"""McNemar exact/mid-p/χ², the paired Wald interval and the paired case bootstrap."""

from __future__ import annotations

import pytest

from evals_pipeline.statistics import paired
from evals_pipeline.statistics.paired import (
    PairedTable,
    bootstrap_from_indices,
    mcnemar,
    paired_bootstrap,
    paired_table,
    percentile,
)

TOL4, TOL6 = 5e-5, 5e-7
# §10 vector MN: N 50, a 20, b 11, c 3, d 16
MN = PairedTable(a=20, b=11, c=3, d=16)
# The bootstrap vectors ordered a-, b-, c-, d-blocks: A = 1,1,0,0; B = 1,0,1,0.
MN_A = [1.0] * 20 + [1.0] * 11 + [0.0] * 3 + [0.0] * 16
MN_B = [1.0] * 20 + [0.0] * 11 + [1.0] * 3 + [0.0] * 16


def test_section10_mn_vector() -> None:
    result = mcnemar(MN)
    assert (result.n, result.n_discordant, result.statistic) == (50, 14, 3)
    assert result.delta is not None and abs(result.delta - 0.16) < TOL4
    assert result.p_exact == 940 / 16384  # exact fraction
    assert abs(result.p_exact - 0.057373) < TOL6
    assert result.p_mid == 576 / 16384
    assert abs(result.p_mid - 0.035156) < TOL6
    assert result.chi2 is not None and abs(result.chi2 - 4.5714) < TOL4
    assert result.chi2_p is not None and abs(result.chi2_p - 0.032509) < TOL6
    assert result.chi2_cc is not None and abs(result.chi2_cc - 3.5) < TOL4
    assert result.chi2_cc_p is not None and abs(result.chi2_cc_p - 0.061369) < TOL6
    assert result.sd is not None and abs(result.sd - 0.509502) < TOL6
    assert result.se is not None and abs(result.se - 0.072054) < TOL6
    assert result.wald_low is not None and abs(result.wald_low - 0.0188) < TOL4
    assert result.wald_high is not None and abs(result.wald_high - 0.3012) < TOL4


def test_mn_pass_rates_and_table_from_outcomes() -> None:
    # §10 MN: pass rates A 0.62, B 0.46
    table = paired_table([x == 1.0 for x in MN_A], [x == 1.0 for x in MN_B])
    assert table == MN
    assert sum(MN_A) / 50 == 0.62 and sum(MN_B) / 50 == 0.46


@pytest.mark.parametrize(
    ("b", "c", "p_exact", "p_mid"),
    [
        (5, 5, 1.0, 1.0),  # §10 edge: mid-p from the unclipped tail, not 0.7539
        (0, 0, 1.0, 1.0),  # §10 edge: no discordant pairs
        (6, 0, 0.03125, 0.015625),  # §10 edge
        (0, 6, 0.03125, 0.015625),  # the test is symmetric in b and c
    ],
)
def test_section10_mcnemar_edges(b: int, c: int, p_exact: float, p_mid: float) -> None:
    result = mcnemar(PairedTable(a=10, b=b, c=c, d=10))
    assert result.p_exact == p_exact
    assert result.p_mid == p_mid


def test_subtracting_from_the_clipped_p_would_be_wrong() -> None:
    # §10: 1 - C(10, 5)/2^10 = 0.7539 is the wrong mid-p for b = c = 5
    assert mcnemar(PairedTable(a=0, b=5, c=5, d=0)).p_mid != pytest.approx(0.7539, abs=1e-4)


def test_no_discordant_pairs_has_no_chi2_and_zero_delta() -> None:
    result = mcnemar(PairedTable(a=7, b=0, c=0, d=3))
    assert result.chi2 is None and result.chi2_p is None and result.chi2_cc is None
    assert result.delta == 0.0 and result.sd == 0.0
    assert result.wald_low == result.wald_high == 0.0


def test_continuity_correction_never_exceeds_uncorrected() -> None:
    # b = c: the literal (|b - c| - 1)² would give 1/n_d; the correction only shrinks χ²
    result = mcnemar(PairedTable(a=0, b=5, c=5, d=0))
    assert result.chi2 == 0.0 and result.chi2_cc == 0.0 and result.chi2_cc_p == 1.0


def test_empty_and_single_case_tables() -> None:
    empty = mcnemar(PairedTable(a=0, b=0, c=0, d=0))
    assert (empty.p_exact, empty.p_mid, empty.delta, empty.se) == (1.0, 1.0, None, None)
    single = mcnemar(PairedTable(a=0, b=1, c=0, d=0))
    assert single.delta == 1.0 and single.sd is None and single.wald_low is None


def test_negative_counts_raise() -> None:
    with pytest.raises(ValueError):
        mcnemar(PairedTable(a=0, b=-1, c=0, d=0))


def test_section10_bootstrap_exact_with_the_numpy_procedure() -> None:
    # §10 MN bootstrap: default_rng(12345), integers(0, N, size=(10000, N)), numpy.percentile
    np = pytest.importorskip("numpy")
    idx = np.random.default_rng(12345).integers(0, 50, size=(10_000, 50))
    result = bootstrap_from_indices(MN_A, MN_B, idx.tolist())
    assert abs(result.ci95_low - 0.02) < 1e-12 and abs(result.ci95_high - 0.30) < 1e-12
    assert result.p_delta_le_zero == 0.018
    assert abs(result.delta - 0.16) < 1e-12
    assert (result.n_cases, result.n_resamples, result.seed) == (50, 10_000, None)
    a, b = np.array(MN_A), np.array(MN_B)
    deltas = a[idx].mean(axis=1) - b[idx].mean(axis=1)
    lo, hi = np.percentile(deltas, [2.5, 97.5])
    assert abs(result.ci95_low - lo) < 1e-12 and abs(result.ci95_high - hi) < 1e-12


def test_section10_bootstrap_by_seed_is_the_numpy_procedure_exactly() -> None:
    # §10 MN with the spec's RNG procedure: CI [0.02, 0.30] and P(Δ* ≤ 0) = 0.018, exactly
    result = paired_bootstrap(MN_A, MN_B, seed=12345)
    assert abs(result.ci95_low - 0.02) < 1e-12 and abs(result.ci95_high - 0.30) < 1e-12
    assert result.p_delta_le_zero == 0.018
    assert result.seed == 12345 and result.n_resamples == 10_000


def test_bootstrap_drawn_in_blocks_is_the_same_as_drawn_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_once = paired_bootstrap(MN_A, MN_B, seed=12345, n_resamples=999)
    monkeypatch.setattr(paired, "RESAMPLE_CELLS", 7 * len(MN_A))  # blocks of 7 resamples
    assert paired_bootstrap(MN_A, MN_B, seed=12345, n_resamples=999) == at_once


def test_bootstrap_is_reproducible_by_seed() -> None:
    first = paired_bootstrap(MN_A, MN_B, seed=7, n_resamples=500)
    assert paired_bootstrap(MN_A, MN_B, seed=7, n_resamples=500) == first
    assert paired_bootstrap(MN_A, MN_B, seed=8, n_resamples=500) != first


def test_bootstrap_of_identical_agents_is_all_ties() -> None:
    # all ties: every resample gives Δ* = 0 exactly, so the interval collapses and P(Δ* ≤ 0) = 1
    scores = [1.0, 0.5, 0.0, 2 / 3]
    result = paired_bootstrap(scores, list(scores), seed=1, n_resamples=200)
    assert (result.delta, result.ci95_low, result.ci95_high, result.p_delta_le_zero) == (0, 0, 0, 1)


def test_bootstrap_statistics_of_given_resamples() -> None:
    # resample deltas: [0, 0] → 1, [1, 1] → 0, [0, 1] → 0.5; percentiles interpolate between them
    result = bootstrap_from_indices([1.0, 0.0], [0.0, 0.0], [[0, 0], [1, 1], [0, 1]])
    assert result.ci95_low == pytest.approx(0.025) and result.ci95_high == pytest.approx(0.975)
    assert result.p_delta_le_zero == pytest.approx(1 / 3)
    assert result.delta == 0.5


@pytest.mark.parametrize(("a", "b"), [([], []), ([1.0], [1.0, 0.0])])
def test_bootstrap_rejects_empty_or_unpaired_inputs(a: list[float], b: list[float]) -> None:
    with pytest.raises(ValueError):
        paired_bootstrap(a, b, seed=0)


def test_percentile_interpolates_like_numpy() -> None:
    values = [0.0, 1.0, 2.0, 10.0]
    assert percentile(values, 0.0) == 0.0 and percentile(values, 1.0) == 10.0
    assert percentile(values, 0.5) == 1.5
    assert percentile(values, 0.9) == pytest.approx(2 + 0.7 * 8)
    with pytest.raises(ValueError):
        percentile([], 0.5)
