"""Distribution helpers the tests and intervals need, on the stdlib only (scipy is not a dependency).

The binomial tails are exact rationals: McNemar and the position-bias test compare them with
published fractions such as 940/16384, and a float sum could land on the wrong side of alpha.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Final

# Φ⁻¹(0.975) as judging.md §0 prints it (scipy's value); NormalDist().inv_cdf(0.975) is 1 ulp lower,
# and the spec's vectors are computed with this literal.
Z95: Final = 1.959963984540054


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p) of the standard normal, for intervals at a confidence other than 95%."""
    if not 0 < p < 1:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    return NormalDist().inv_cdf(p)


def chi2_sf_df1(x: float) -> float:
    """P(χ²₁ ≥ x): the p-value of a one-degree-of-freedom chi-square statistic."""
    if x < 0:
        raise ValueError(f"a chi-square statistic is ≥ 0, got {x}")
    # χ²₁ is the square of a standard normal, so its tail is the two-sided normal tail.
    return math.erfc(math.sqrt(x / 2))


def half_binomial_pmf(i: int, n: int) -> Fraction:
    """P(X = i) for X ~ Binomial(n, 1/2), exactly."""
    _check_counts(i, n)
    return Fraction(math.comb(n, i), 2**n)


def half_binomial_cdf(s: int, n: int) -> Fraction:
    """P(X ≤ s) for X ~ Binomial(n, 1/2), exactly."""
    _check_counts(s, n)
    return Fraction(sum(math.comb(n, i) for i in range(s + 1)), 2**n)


def sign_test_p(successes: int, trials: int) -> float:
    """Two-sided exact binomial test of p0 = 1/2 (1.0 for zero trials).

    For the symmetric null, scipy's "sum of outcomes no more likely than observed" rule equals twice
    the smaller tail, clipped at 1; both McNemar's exact test and the position-bias test use it.
    """
    _check_counts(successes, trials)
    smaller = min(successes, trials - successes)
    return float(min(Fraction(1), 2 * half_binomial_cdf(smaller, trials)))


def _check_counts(i: int, n: int) -> None:
    if n < 0 or not 0 <= i <= n:
        raise ValueError(f"need 0 ≤ i ≤ n, got i={i}, n={n}")
