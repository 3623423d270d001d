"""What a run will cost and take, before it starts, from the suite's last reports: each
(case, agent)'s agent cost, grading and judging cost and duration per trial in their
cases.parquet; before a suite's first run, a guess from the targets' token prices. Trials whose
stored run (and grade) the run will reuse cost nothing (docs/report.md, "Estimate before a
run")."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from evals_pipeline.history.entries import suite_entries
from evals_pipeline.history.outcomes import CASES_FILE
from evals_pipeline.models.targets import Pricing
from evals_pipeline.results.keys import FileLookups, Identity, agent_identity, case_keys

if TYPE_CHECKING:
    from evals_pipeline.models.case import ResolvedCase
    from evals_pipeline.results.store import ResultStore

ESTIMATE_RUNS = 3
"""How many of the suite's last reports an estimate reads."""

GUESS_INPUT_TOKENS = 50_000
GUESS_OUTPUT_TOKENS = 5_000
"""The tokens one agent run is taken to use when no past run says (an agent run's order of
magnitude: a few turns over a prompt and the files it reads)."""


@dataclass(frozen=True)
class PlannedRun:
    """One (case, agent) a run is about to launch, `trials` times; `reused` of those trials
    reuse their stored run, and `regraded` of these are graded again (their grade's key
    changed)."""

    case_key: str
    agent: str
    trials: int = 1
    reused: int = 0
    regraded: int = 0

    @property
    def to_run(self) -> int:
        """Trials whose agent runs."""
        return self.trials - self.reused

    @property
    def to_grade(self) -> int:
        """Trials graded (and judged) afresh: those that run and the reused ones regraded."""
        return self.to_run + self.regraded


def planned_runs(
    cases: Iterable[ResolvedCase], store: ResultStore | None, identity: Identity = agent_identity
) -> list[PlannedRun]:
    """The (case, agent)s of `cases` as a run with `store` would launch them: each trial whose
    stored run the case pipeline reuses (results/run_reuse.py) counted as reused, and regraded
    unless its trial grade is stored under its unchanged key (as grading reuses it)."""
    # Imported here: the graders' models it reads load with a run, not with `runs` or `compare`.
    from evals_pipeline.results.run_reuse import stored_run

    files = FileLookups()  # a suite's cases name the same graders and scripts: hashed once
    planned = []
    for case in cases:
        reused = regraded = 0
        if store is not None and case.cache:
            keys = case_keys(case, identity, files)
            for trial in range(case.trials.count):
                if stored_run(store, case, keys, trial).run is None:
                    continue
                reused += 1
                regraded += store.trial(case.case_key, case.agent, keys.trial_grade(trial)) is None
        planned.append(PlannedRun(case.case_key, case.agent, case.trials.count, reused, regraded))
    return planned


@dataclass(frozen=True)
class PastRun:
    """One (case, agent) of a past report: its agent's cost, its grading and judging cost
    (None: none priced) and its duration, for one trial."""

    case_key: str
    agent: str
    cost_usd: float | None
    duration_ms: int
    judge_cost_usd: float | None = None


class RunEstimate(BaseModel):
    """The planned run and, when the history allows, its agent cost and wall time."""

    suite: str
    cases: int = Field(description="Distinct tests planned.")
    agents: int
    runs: int = Field(description="Agent runs planned: (case, agent) pairs times trials.")
    reused: int = Field(
        default=0, description="Of `runs`, those whose stored run is reused: they cost nothing."
    )
    regraded: int = Field(
        default=0, description="Of `reused`, those graded (and judged) again: a grader changed."
    )
    workers: int
    from_reports: int = Field(description="Past reports the figures come from (0: no history).")
    without_figures: int = Field(
        default=0,
        description="Planned (case, agent) pairs no past report ran; counted at their agent's "
        "mean (else the suite's).",
    )
    cost_usd: float | None = Field(
        default=None, description="Agents, graders and judges; None: nothing priced."
    )
    agent_cost_usd: float | None = Field(default=None, description="The agents' part.")
    judge_cost_usd: float | None = Field(
        default=None, description="LLM graders' and judge panels' part; None: none priced."
    )
    guessed: bool = Field(
        default=False,
        description="No past run: cost_usd is the agents' token prices times GUESS_*_TOKENS.",
    )
    unpriced_agents: int = Field(default=0, description="Guess only: agents with no pricing.")
    duration_s: float | None = Field(
        default=None, description="Agent wall time at `workers` at once; grading comes on top."
    )


def read_past_runs(folder: Path) -> list[PastRun]:
    """The (case, agent) figures of one report folder; none without cases.parquet. Runs that
    never started (a setup error) say nothing of cost or time and are left out; a run that
    took under a millisecond (a mock agent) is a figure like any other."""
    path = folder / CASES_FILE
    if not path.exists():
        return []
    from evals_pipeline.storage.parquet import read_parquet  # pyarrow: see read_outcomes

    # Reports written before judge_cost_usd was kept lack it: read_parquet leaves it out.
    columns = ["case_key", "agent", "cost_usd", "judge_cost_usd", "duration_ms", "trials"]
    table = read_parquet(path, columns=[*columns, "failure_stage"])
    return [
        PastRun(
            r["case_key"],
            r["agent"],
            r["cost_usd"],
            r["duration_ms"],
            _per_trial(r.get("judge_cost_usd"), r.get("trials")),
        )
        for r in table.to_pylist()
        if r["duration_ms"] is not None and r.get("failure_stage") != "setup"
    ]


def _per_trial(total: float | None, trials: int | None) -> float | None:
    """A case's grading cost over its trials, per trial (the estimate counts runs per trial)."""
    return None if total is None else total / max(1, trials or 1)


def history_of(root: Path, suite: str, last: int = ESTIMATE_RUNS) -> list[list[PastRun]]:
    """The figures of the suite's last `last` reports that have any, oldest first."""
    found: list[list[PastRun]] = []
    for entry in reversed(suite_entries(root, suite)):
        runs = read_past_runs(Path(entry.folder))
        if runs:
            found.insert(0, runs)
        if len(found) == last:
            break
    return found


def estimate_run(
    suite: str,
    planned: Sequence[PlannedRun],
    history: Sequence[Sequence[PastRun]],
    workers: int,
    prices: Mapping[str, Pricing | None] | None = None,
) -> RunEstimate:
    """The cost and agent wall time of `planned` from `history` (each report's figures): a
    pair's mean over the reports that ran it, else its agent's mean, else the suite's; the wall
    time packs the runs onto `workers` lanes, longest first. The cost is the agents' plus their
    graders' and judges'. With no history, the agents' cost is guessed from `prices` (agent →
    its target's pricing) at GUESS_*_TOKENS a run."""
    plan = RunEstimate(
        suite=suite,
        cases=len({p.case_key for p in planned}),
        agents=len({p.agent for p in planned}),
        runs=sum(p.trials for p in planned),
        reused=sum(p.reused for p in planned),
        regraded=sum(p.regraded for p in planned),
        workers=max(1, workers),
        from_reports=len(history),
    )
    past = [run for report in history for run in report]
    if not planned:
        return plan
    if not past:
        return _guess(plan, planned, prices or {})
    cost = _Means([(r.case_key, r.agent, r.cost_usd) for r in past if r.cost_usd is not None])
    judging = _Means(
        [(r.case_key, r.agent, r.judge_cost_usd) for r in past if r.judge_cost_usd is not None]
    )
    time = _Means([(r.case_key, r.agent, float(r.duration_ms)) for r in past])
    durations: list[float] = []
    agent_cost = judge_cost = 0.0
    for p in planned:
        durations += [time.of(p.case_key, p.agent) or 0.0] * p.to_run
        agent_cost += (cost.of(p.case_key, p.agent) or 0.0) * p.to_run
        judge_cost += (judging.of(p.case_key, p.agent) or 0.0) * p.to_grade
    fresh = [p for p in planned if p.to_grade]
    return plan.model_copy(
        update={
            "without_figures": sum(not time.knows(p.case_key, p.agent) for p in fresh),
            "cost_usd": agent_cost + judge_cost if cost.any or judging.any else None,
            "agent_cost_usd": agent_cost if cost.any else None,
            "judge_cost_usd": judge_cost if judging.any else None,
            "duration_s": _makespan(durations, plan.workers) / 1000,
        }
    )


def _guess(
    plan: RunEstimate, planned: Sequence[PlannedRun], prices: Mapping[str, Pricing | None]
) -> RunEstimate:
    """The agents' cost with no history: each priced agent's run at GUESS_*_TOKENS; agents
    with no pricing (or that price themselves, as Claude Code) are counted apart."""
    priced = {agent: p for agent, p in prices.items() if p is not None}
    if not priced:
        return plan
    per_run = {
        agent: (GUESS_INPUT_TOKENS * p.input + GUESS_OUTPUT_TOKENS * p.output) / 1_000_000
        for agent, p in priced.items()
    }
    cost = sum(per_run[p.agent] * p.to_run for p in planned if p.agent in per_run)
    unpriced = {p.agent for p in planned if p.to_run} - per_run.keys()
    return plan.model_copy(
        update={
            "cost_usd": cost,
            "agent_cost_usd": cost,
            "guessed": True,
            "unpriced_agents": len(unpriced),
        }
    )


class _Means:
    """Means of a figure per (case, agent), per agent, and over all, for fallbacks."""

    def __init__(self, values: list[tuple[str, str, float]]) -> None:
        pairs: dict[tuple[str, str], list[float]] = defaultdict(list)
        agents: dict[str, list[float]] = defaultdict(list)
        for case_key, agent, value in values:
            pairs[(case_key, agent)].append(value)
            agents[agent].append(value)
        self._pairs = {k: fmean(v) for k, v in pairs.items()}
        self._agents = {k: fmean(v) for k, v in agents.items()}
        self._all = fmean(v for _, _, v in values) if values else None
        self.any = bool(values)

    def knows(self, case_key: str, agent: str) -> bool:
        return (case_key, agent) in self._pairs

    def of(self, case_key: str, agent: str) -> float | None:
        found = self._pairs.get((case_key, agent))
        return found if found is not None else self._agents.get(agent, self._all)


def _makespan(durations: list[float], workers: int) -> float:
    """When the last of `durations` ends on `workers` lanes, each next-longest run going to
    the lane free first (what a pool of workers does)."""
    lanes = [0.0] * min(workers, max(1, len(durations)))
    for duration in sorted(durations, reverse=True):
        heapq.heapreplace(lanes, lanes[0] + duration)
    return max(lanes)


def render_estimate(estimate: RunEstimate, root: Path | str | None = None) -> str:
    """The estimate in a line, e.g. `estimate: 30 cases x 2 agents, ~$1.20 and ~4 min at 4
    workers (from the last 3 runs)`, or `..., 19 stored results reused, ~$0.04 for the 1 that
    runs and ...`, or why there is none."""
    head = f"estimate: {_count(estimate.cases, 'case')} x {_count(estimate.agents, 'agent')}"
    if estimate.runs != estimate.cases * estimate.agents:
        head += f" ({estimate.runs} agent runs)"
    if estimate.reused:
        head += f", {_count(estimate.reused, 'stored result')} reused"
        if estimate.regraded:
            head += f" ({estimate.regraded} graded again)"
    to_run = estimate.runs - estimate.reused
    if not to_run and not estimate.regraded:
        return f"{head}: nothing runs, ~{_dollars(0.0)}"
    scope = ""
    if estimate.reused and to_run:
        scope = f" for the {to_run} that run{'s' if to_run == 1 else ''}"
        scope += f" and the {estimate.regraded} graded again" if estimate.regraded else ""
    elif estimate.reused:
        scope = f" for the {estimate.regraded} graded again"
    if estimate.guessed:
        text = (
            f"{head}, ~{_dollars(estimate.cost_usd or 0.0)}{scope} (guess: no previous run; "
            "from token "
            f"prices x {GUESS_INPUT_TOKENS + GUESS_OUTPUT_TOKENS:,} expected tokens per case, "
            f"{GUESS_INPUT_TOKENS:,} in and {GUESS_OUTPUT_TOKENS:,} out; agents only, "
            "graders and judges not counted; time unknown)"
        )
        if estimate.unpriced_agents:
            text += f"; {_count(estimate.unpriced_agents, 'agent')} without pricing not counted"
        return text
    if not estimate.from_reports:
        where = f" under {root}" if root is not None else ""
        return f"{head}; no past run of {estimate.suite}{where} to estimate cost and time from"
    cost = "cost unknown" if estimate.cost_usd is None else f"~{_dollars(estimate.cost_usd)}"
    if estimate.judge_cost_usd is not None:
        agents = _dollars(estimate.agent_cost_usd or 0.0)
        cost += f" ({agents} agents + {_dollars(estimate.judge_cost_usd)} graders and judges)"
    cost += scope
    runs = "run" if estimate.from_reports == 1 else f"{estimate.from_reports} runs"
    text = (
        f"{head}, {cost} and ~{_minutes(estimate.duration_s or 0.0)} at "
        f"{_count(estimate.workers, 'worker')} (from the last {runs})"
    )
    if estimate.without_figures:
        text += f"; {estimate.without_figures} never ran before, counted at the mean"
    return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _dollars(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.995 or value == 0 else f"${value:.4f}"


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
