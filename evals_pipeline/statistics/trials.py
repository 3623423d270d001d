"""Repeated trials: unbiased pass@k ("can it ever") and pass^k ("every time") (judging.md §10).

Per case with n trials and c successes; a suite value is the plain mean over cases. Both use exact
binomial coefficients: Python integers make the ratio exact and the final float correctly rounded,
so Chen et al.'s product form (needed for float overflow) is unnecessary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evals_pipeline.models.statistics import RepeatedTrials


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k trials drawn without replacement passes) = 1 - C(n-c, k)/C(n, k) (Chen et al. 2021)."""
    _check(n, c, k)
    # math.comb is 0 when n - c < k, which gives the spec's "= 1 if n - c < k".
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k trials drawn without replacement pass) = C(c, k)/C(n, k) (Yao et al. 2024).

    Unbiased for p^k, where the plug-in (c/n)^k is not.
    """
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def suite_pass_at_k(cases: Sequence[tuple[int, int]], k: int) -> float:
    """Mean pass@k over (n, c) cases; every case needs k ≤ n."""
    if not cases:
        raise ValueError("a suite value needs at least one case")
    return math.fsum(pass_at_k(n, c, k) for n, c in cases) / len(cases)


def suite_pass_hat_k(cases: Sequence[tuple[int, int]], k: int) -> float:
    """Mean pass^k over (n, c) cases; every case needs k ≤ n."""
    if not cases:
        raise ValueError("a suite value needs at least one case")
    return math.fsum(pass_hat_k(n, c, k) for n, c in cases) / len(cases)


def repeated_trials(cases: Sequence[tuple[int, int]]) -> tuple[RepeatedTrials, ...]:
    """Suite pass@k and pass^k for k = 1 .. the smallest n (the report's `repeated_trials`).

    k stops at the smallest n because the estimators are undefined for k > n, and averaging
    over a varying set of cases would mix suites across k.
    """
    if not cases:
        return ()
    top = min(n for n, _ in cases)
    return tuple(
        RepeatedTrials(
            k=k,
            pass_at_k=suite_pass_at_k(cases, k),
            pass_hat_k=suite_pass_hat_k(cases, k),
            n_cases=len(cases),
        )
        for k in range(1, top + 1)
    )


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 ≤ c ≤ n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 ≤ k ≤ n, got k={k}, n={n}")
