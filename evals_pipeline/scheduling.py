"""Which agent runs start, in what order, and which are refused without running.

AgentV's run control (orchestrator.ts), per agent of a suite:
- `depends_on`: tests run in waves, each after the tests it depends on; a test whose dependency
  ended in an execution error is, by its `on_dependency_failure`, an error without running
  (`skip`, the default, and `fail`) or run anyway (`run`);
- `execution.fail_on_error`: once a run ends in an execution error, runs not yet started are
  errors ("Halted: …");
- `execution.budget_usd`: once the finished runs' summed cost reaches the budget, runs not yet
  started are errors ("Suite budget exceeded …").
A refused run is recorded as an agent run that failed at setup, so it grades as an execution
error with score 0, as in AgentV.

Our own run budget (`evals-pipeline run --budget USD`) spans every agent of the run: once the
finished runs' summed cost reaches it, no new run starts and the rest are *not run* (no
session, no grade; the report counts and names them), not errors. Runs in flight finish, so the
spend passes the budget by at most the runs that were in flight when it was reached.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from evals_pipeline.models.case import ResolvedCase


def waves(cases: Iterable[ResolvedCase]) -> list[list[ResolvedCase]]:
    """`cases` in dependency order: each wave holds the cases whose dependencies (same agent)
    are all in earlier waves. A dependency that is not among `cases` is not waited for."""
    cases = list(cases)
    present = {(c.agent, c.test_id) for c in cases}
    level: dict[tuple[str, str], int] = {}

    def depth(case: ResolvedCase, seen: frozenset[str]) -> int:
        key = (case.agent, case.test_id)
        if key not in level:
            deps = [
                by_key[(case.agent, d)]
                for d in case.depends_on
                if (case.agent, d) in present and d not in seen
            ]
            level[key] = 1 + max((depth(d, seen | {case.test_id}) for d in deps), default=-1)
        return level[key]

    by_key = {(c.agent, c.test_id): c for c in cases}
    result: list[list[ResolvedCase]] = []
    for case in cases:
        index = depth(case, frozenset())
        while len(result) <= index:
            result.append([])
        result[index].append(case)
    return result


class RunGate:
    """What has happened so far in a run of a suite, per agent: errors, cost, dependencies.

    Thread-safe: runs start and finish on a pool's threads.
    """

    def __init__(self, run_budget_usd: float | None = None) -> None:
        self._lock = threading.Lock()
        self._errored: set[str] = set()  # agents that had an execution error
        self._cost: dict[str, float] = {}
        self._run_cost = 0.0
        self.run_budget_usd = run_budget_usd
        self._failed_trials: dict[tuple[str, str], list[bool]] = {}

    def refusal(self, case: ResolvedCase) -> str | None:
        """Why a run of `case` must not start, or None."""
        with self._lock:
            failed = [d for d in case.depends_on if self._dependency_failed(case.agent, d)]
            if failed and case.on_dependency_failure != "run":
                prefix = "Skipped" if case.on_dependency_failure == "skip" else "Failed"
                return f"{prefix}: dependency failed ({', '.join(failed)})"
            if case.fail_on_error and case.agent in self._errored:
                return "Halted: execution error encountered with fail_on_error enabled"
            spent = self._cost.get(case.agent, 0.0)
            if case.budget_usd is not None and spent >= case.budget_usd:
                return f"Suite budget exceeded (${spent:.4f} / ${case.budget_usd:.4f})"
        return None

    def not_run(self) -> str | None:
        """Why no new run may start at all (the run budget is spent), or None."""
        with self._lock:
            budget, spent = self.run_budget_usd, self._run_cost
        if budget is None or spent < budget:
            return None
        return not_run_reason(budget, spent)

    def counts_cost(self, case: ResolvedCase) -> bool:
        """Whether a finished run of `case` must be priced (a budget is watching it)."""
        return case.budget_usd is not None or self.run_budget_usd is not None

    def refused(self, case: ResolvedCase) -> None:
        """Record that a run of `case` was refused (a dependent of it then fails too)."""
        with self._lock:
            self._failed_trials.setdefault((case.agent, case.test_id), []).append(True)

    def finished(self, case: ResolvedCase, *, errored: bool, cost_usd: float | None) -> None:
        """Record how a run of `case` that started ended."""
        with self._lock:
            self._failed_trials.setdefault((case.agent, case.test_id), []).append(errored)
            if errored:
                self._errored.add(case.agent)
            if cost_usd:
                self._cost[case.agent] = self._cost.get(case.agent, 0.0) + cost_usd
                self._run_cost += cost_usd

    def spent(self, cost_usd: float) -> None:
        """Add the cost of runs the gate did not see start (a batch) to the run's spend."""
        with self._lock:
            self._run_cost += cost_usd

    @property
    def run_cost(self) -> float:
        """The summed cost of the runs that finished so far, over every agent."""
        with self._lock:
            return self._run_cost

    def _dependency_failed(self, agent: str, test_id: str) -> bool:
        # A test fails its dependents when every trial of it was an execution error.
        trials = self._failed_trials.get((agent, test_id), [])
        return bool(trials) and all(trials)


def run_budget(cases: Iterable[ResolvedCase]) -> float | None:
    """The run's budget the cases carry (one run option, the same on every case), or None."""
    return next((c.run_budget_usd for c in cases if c.run_budget_usd is not None), None)


NOT_RUN_PREFIX = "not run: run budget"


def not_run_reason(budget_usd: float, spent_usd: float) -> str:
    """The reason a case was not run because the run budget was spent."""
    return f"{NOT_RUN_PREFIX} of {usd(budget_usd)} spent ({usd(spent_usd)})"


def usd(value: float) -> str:
    """Dollars to the cent, or to four places below one dollar (scripted costs are small)."""
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"
