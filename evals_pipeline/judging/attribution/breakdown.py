"""`failure_breakdown`: the report's failure section (§9.2), counts and rates per category and
tier over an agent's trials."""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.judging import (
    FAILURE_TAXONOMY,
    CategoryCount,
    FailureBreakdown,
    FailureCategory,
    FailureClassification,
    FailureTier,
    TierCount,
)
from evals_pipeline.models.pass_rate import pass_rate

_PRECEDENCE: tuple[FailureCategory, ...] = tuple(FAILURE_TAXONOMY)


def failure_breakdown(
    n_trials: int, n_passed: int, classifications: Sequence[FailureClassification]
) -> FailureBreakdown:
    """The report's failure section (§9.2): counts and rates per category and tier.

    Failed trials without a classification (see `attribute_failure`) count in `n_failed` only.
    """
    n_failed = n_trials - n_passed
    if n_passed < 0 or n_failed < 0 or len(classifications) > n_failed:
        raise ValueError(
            f"{n_trials} trials, {n_passed} passed, {len(classifications)} classified failures"
        )
    by_category = {c: [x for x in classifications if x.primary == c] for c in _PRECEDENCE}
    tiers: tuple[FailureTier, ...] = ("environmental", "resource", "capability")
    by_tier = {tier: sum(1 for x in classifications if x.tier == tier) for tier in tiers}
    infra = by_tier["environmental"]
    return FailureBreakdown(
        n_trials=n_trials,
        n_failed=n_failed,
        by_category={
            c: CategoryCount(
                count=len(xs),
                rate_of_trials=_rate(len(xs), n_trials),
                rate_of_failures=_rate(len(xs), n_failed),
                confirmed=sum(1 for x in xs if x.check and x.check.confirmed is True),
                disputed=sum(1 for x in xs if x.check and x.check.confirmed is False),
            )
            for c, xs in by_category.items()
        },
        by_tier={
            t: TierCount(count=n, rate_of_trials=_rate(n, n_trials)) for t, n in by_tier.items()
        },
        infra_failure_rate=_rate(infra, n_trials),
        pass_rate_incl_infra=pass_rate(n_passed, n_trials),
        pass_rate_excl_infra=pass_rate(n_passed, n_trials - infra),
    )


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None
