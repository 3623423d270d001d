"""Unbiased pass@k and pass^k, per case and per suite."""

from __future__ import annotations

import pytest

from evals_pipeline.statistics.trials import (
    pass_at_k,
    pass_hat_k,
    repeated_trials,
    suite_pass_at_k,
    suite_pass_hat_k,
)

TOL4 = 5e-5
# §10 vector PK: n = 5, four cases with c = 5, 4, 2, 0
PK_CASES = [(5, 5), (5, 4), (5, 2), (5, 0)]
# k, per-case pass@k, suite pass@k, per-case pass^k, suite pass^k
PK = [
    (1, (1, 0.8, 0.4, 0), 0.55, (1, 0.8, 0.4, 0), 0.55),
    (2, (1, 1, 0.7, 0), 0.675, (1, 0.6, 0.1, 0), 0.425),
    (3, (1, 1, 0.9, 0), 0.725, (1, 0.4, 0, 0), 0.35),
    (5, (1, 1, 1, 0), 0.75, (1, 0, 0, 0), 0.25),
]


@pytest.mark.parametrize(("k", "per_at", "suite_at", "per_hat", "suite_hat"), PK)
def test_section10_pk(
    k: int,
    per_at: tuple[float, ...],
    suite_at: float,
    per_hat: tuple[float, ...],
    suite_hat: float,
) -> None:
    for (n, c), at, hat in zip(PK_CASES, per_at, per_hat, strict=True):
        assert abs(pass_at_k(n, c, k) - at) < TOL4
        assert abs(pass_hat_k(n, c, k) - hat) < TOL4
    assert abs(suite_pass_at_k(PK_CASES, k) - suite_at) < TOL4
    assert abs(suite_pass_hat_k(PK_CASES, k) - suite_hat) < TOL4


def test_section10_plug_in_contrast() -> None:
    # §10: c = 2, n = 5, k = 3: unbiased 0.9 and 0 where the plug-ins give 0.784 and 0.064
    assert abs(pass_at_k(5, 2, 3) - 0.9) < 1e-12
    assert pass_hat_k(5, 2, 3) == 0.0
    assert abs((1 - (1 - 2 / 5) ** 3) - 0.784) < 1e-12  # the biased plug-in differs
    assert abs((2 / 5) ** 3 - 0.064) < 1e-12


def test_pass_at_k_is_one_when_failures_cannot_fill_k() -> None:
    # §10 "= 1 if n - c < k"
    assert pass_at_k(10, 8, 3) == 1.0


def test_pass_at_k_matches_the_stable_product_form() -> None:
    # §10: 1 - ∏_{i=n-c+1..n}(1 - k/i), Chen et al.'s numerically stable form
    n, c, k = 200, 7, 10
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1 - k / i
    assert abs(pass_at_k(n, c, k) - (1 - product)) < 1e-12


def test_large_n_stays_finite() -> None:
    assert 0 < pass_at_k(2000, 3, 500) < 1
    assert 0 < pass_hat_k(2000, 1990, 500) < 1


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (0, 0, 1), (5, 2, 0), (5, 6, 1), (5, -1, 1)])
def test_invalid_arguments_raise(n: int, c: int, k: int) -> None:
    # k > n, n = 0, k = 0, c > n, c < 0
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_suite_rejects_k_above_any_case_and_empty_suites() -> None:
    with pytest.raises(ValueError):
        suite_pass_at_k([(5, 2), (3, 1)], 4)
    with pytest.raises(ValueError):
        suite_pass_hat_k([], 1)


def test_repeated_trials_table_stops_at_the_smallest_n() -> None:
    rows = repeated_trials(PK_CASES)
    assert [r.k for r in rows] == [1, 2, 3, 4, 5]
    assert abs(rows[1].pass_at_k - 0.675) < TOL4 and abs(rows[1].pass_hat_k - 0.425) < TOL4
    assert rows[0].n_cases == 4
    assert [r.k for r in repeated_trials([(5, 2), (3, 1)])] == [1, 2, 3]
    assert repeated_trials([]) == ()


def test_pass_at_k_grows_and_pass_hat_k_shrinks_with_k() -> None:
    rows = repeated_trials(PK_CASES)
    ats, hats = [r.pass_at_k for r in rows], [r.pass_hat_k for r in rows]
    assert ats == sorted(ats) and hats == sorted(hats, reverse=True)
    assert rows[0].pass_at_k == rows[0].pass_hat_k  # k = 1: both are the plain pass rate
