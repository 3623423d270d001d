"""The stdlib stand-ins for scipy: z, chi-square tail, exact binomial tails and the sign test."""

from __future__ import annotations

from fractions import Fraction
from statistics import NormalDist

import pytest

from evals_pipeline.statistics.distributions import (
    Z95,
    chi2_sf_df1,
    half_binomial_cdf,
    half_binomial_pmf,
    normal_quantile,
    sign_test_p,
)


def test_z95_is_the_spec_literal_and_the_normal_quantile() -> None:
    # §0: z = Φ⁻¹(0.975) = 1.959963984540054
    assert Z95 == 1.959963984540054
    assert abs(normal_quantile(0.975) - Z95) < 1e-15
    assert abs(Z95**2 - 3.841459) < 5e-7  # §8 "z² = 3.841459"
    assert abs(NormalDist().cdf(Z95) - 0.975) < 1e-15


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5])
def test_normal_quantile_rejects_p_outside_the_open_interval(p: float) -> None:
    with pytest.raises(ValueError):
        normal_quantile(p)


@pytest.mark.parametrize(
    ("x", "expected"),
    [(0.0, 1.0), (Z95**2, 0.05), (4.5714285714, 0.032509), (3.5, 0.061369)],  # §10 MN
)
def test_chi2_df1_tail(x: float, expected: float) -> None:
    assert abs(chi2_sf_df1(x) - expected) < 5e-7


def test_chi2_rejects_negative_statistic() -> None:
    with pytest.raises(ValueError):
        chi2_sf_df1(-1.0)


def test_half_binomial_is_exact() -> None:
    assert half_binomial_pmf(3, 14) == Fraction(364, 16384)
    assert half_binomial_cdf(3, 14) == Fraction(470, 16384)
    assert half_binomial_cdf(0, 0) == 1
    assert sum(half_binomial_pmf(i, 9) for i in range(10)) == 1


@pytest.mark.parametrize(("i", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_half_binomial_rejects_impossible_counts(i: int, n: int) -> None:
    with pytest.raises(ValueError):
        half_binomial_cdf(i, n)


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        (8, 9, 20 / 512),  # §5 B3
        (1, 9, 20 / 512),  # symmetric: the smaller tail is doubled either way
        (3, 5, 1.0),  # §5 B4
        (10, 11, 24 / 2048),  # §5 B5
        (0, 0, 1.0),  # §5: 1.0 if F + S = 0
        (5, 10, 1.0),  # the middle of an even n: the doubled tail exceeds 1 and is clipped
        (0, 5, 2 / 32),  # F + S ≤ 5 cannot reach 0.05
    ],
)
def test_sign_test(successes: int, trials: int, expected: float) -> None:
    assert sign_test_p(successes, trials) == pytest.approx(expected, abs=1e-15)
