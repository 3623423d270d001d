"""The regression gate on a report: an agent's pass rate dropped significantly against the
previous report, or a required case (a test with `metadata: {required: true}`) regressed."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evals_pipeline.models.history import AgentDelta, CaseChange, RunComparison

if TYPE_CHECKING:
    from evals_pipeline.models.case import ResolvedCase


@dataclass(frozen=True)
class RegressionCheck:
    """The gate's outcome; `description` says why in a line (shown in the Dagster UI)."""

    passed: bool
    description: str
    drops: list[AgentDelta] = field(default_factory=list)
    required_regressions: list[CaseChange] = field(default_factory=list)


def check_regressions(
    comparison: RunComparison | None, required: Collection[str]
) -> RegressionCheck:
    """Fail on any agent with `significant_drop`, or any regressed case whose test id is in
    `required`; pass with nothing to compare against (a suite's first report)."""
    if comparison is None:
        return RegressionCheck(True, "no previous report to compare with")
    drops = [a for a in comparison.agents if a.significant_drop]
    required_regressions = [
        c for c in comparison.changes if c.change == "regressed" and c.test_id in required
    ]
    problems = [
        f"{a.agent}: pass rate {_pct(a.pass_rate_before)} -> {_pct(a.pass_rate_after)} "
        f"(McNemar p = {a.mcnemar.p_exact:.3g})"
        for a in drops
        if a.mcnemar is not None
    ]
    problems += [
        f"required case {c.test_id} regressed for {c.agent}: {c.reason}"
        for c in required_regressions
    ]
    if problems:
        return RegressionCheck(False, "; ".join(problems), drops, required_regressions)
    regressed = sum(a.regressed for a in comparison.agents)
    return RegressionCheck(
        True,
        f"no significant drop and no required case regressed against run "
        f"{comparison.before.run_id} ({regressed} case(s) regressed)",
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def required_test_ids(cases: Iterable[ResolvedCase]) -> set[str]:
    """The tests marked `metadata: {required: true}` (AgentV keeps metadata free-form, so the
    suite still loads there); suite-level metadata marks every test."""
    return {c.test_id for c in cases if (c.metadata or {}).get("required") is True}
