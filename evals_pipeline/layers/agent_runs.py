"""Running the agents: every trial of every case in a fresh workspace, in dependency waves,
stored runs reused."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.adapters.cli import check_health
from evals_pipeline.adapters.cli_batch import batch_context, batch_groups, is_batching, run_batch
from evals_pipeline.adapters.identity import auth_problem
from evals_pipeline.enrichers import run_cost
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import ErrorStage, RecordError
from evals_pipeline.models.reuse import age_text
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import CliTarget
from evals_pipeline.process import now_ms
from evals_pipeline.progress import LayerProgress, Progress, silent
from evals_pipeline.provider_limits import agent_slot
from evals_pipeline.reaping.ledger import sweep_leftovers
from evals_pipeline.results import (
    CaseKeys,
    Identity,
    ResultStore,
    agent_identity,
    case_keys,
)
from evals_pipeline.results.run_reuse import stored_run
from evals_pipeline.scheduling import RunGate, run_budget, waves
from evals_pipeline.stopping import agent_ended, agent_started, stop_when_interrupted, stopping


def run_folder(folder: Path, case_key: str, agent: str, trial: int) -> Path:
    """The artifact folder of one trial of one (case, agent) inside a step's folder."""
    return folder / agent / case_key / f"trial-{trial}"


def _refused_run(
    case: ResolvedCase, trial: int, reason: str, *, setup: bool, not_run: bool = False
) -> AgentRun:
    """A run that never started, kind `refused` (models/errors.py: not started): its target
    cannot start (unhealthy, or a command or grader preflight found missing), (`setup`) the gate
    turned it away (a failed dependency, fail_on_error, the suite budget), or (`not_run`) the run
    budget was spent, which is no error."""
    now = now_ms()
    stage: ErrorStage = "setup" if setup else "agent"
    error = None if not_run else RecordError(stage=stage, kind="refused", message=reason)
    return AgentRun(
        case_key=case.case_key,
        agent=case.agent,
        trial=trial,
        start_ms=now,
        end_ms=now,
        error=error,
        setup_failed=setup,
        not_run=reason if not_run else None,
    )


class _RunReuse:
    """The result store as `run_agents` sees it: stored runs to reuse, new runs to keep."""

    def __init__(self, store: ResultStore | None, identity: Identity) -> None:
        self.store = store
        self.identity = identity
        self._keys: dict[tuple[str, str], CaseKeys] = {}
        self._rerun: dict[tuple[str, str, int], str] = {}

    def keys(self, case: ResolvedCase) -> CaseKeys:
        partition = (case.case_key, case.agent)
        if partition not in self._keys:
            self._keys[partition] = case_keys(case, self.identity)
        return self._keys[partition]

    def stored(self, case: ResolvedCase, trial: int) -> AgentRun | None:
        """The stored run of this trial to reuse (results/run_reuse.py), else None: the agent
        runs, and `rerun_reason` says why when a stored run was passed over."""
        if self.store is None:
            return None
        found = stored_run(self.store, case, self.keys(case), trial)
        if found.rerun_reason is not None:
            self._rerun[(case.agent, case.case_key, trial)] = found.rerun_reason
        return found.run

    def rerun_reason(self, case: ResolvedCase, trial: int) -> str | None:
        """Why a stored run of this trial was not reused, when `stored` found one."""
        return self._rerun.get((case.agent, case.case_key, trial))

    def keep(self, case: ResolvedCase, run: AgentRun) -> AgentRun:
        """`run` with its key, stored the moment it ended; a run that ended after the run was
        stopped (stopping.py) is not stored: it was cut short, and the next run runs it again."""
        if self.store is None or stopping():
            return run
        keyed_run = run.model_copy(update={"result_key": self.keys(case).run(run.trial)})
        self.store.put("run", keyed_run)
        return keyed_run


def run_agents(
    cases: list[ResolvedCase],
    folder: Path,
    *,
    workers: int,
    progress: Progress = silent,
    run_id: str | None = None,
    git_cache: Path | None = None,
    store: ResultStore | None = None,
    identity: Identity = agent_identity,
    finished: Callable[[AgentRun], None] | None = None,
) -> list[AgentRun]:
    """Run every trial of every case, `workers` at a time, each in a fresh workspace.

    Cases run in dependency waves (`depends_on`); a run is refused, and recorded as a setup
    error, when its target is unhealthy, a dependency failed, or the suite's fail_on_error or
    budget_usd says stop (scheduling.py). The cases of a batching `cli` target
    (`provider_batching: true`) run as one invocation per eval file and trial, whatever subset of
    its tests `cases` holds, without waves or gate, as in AgentV. Repositories named by URL are
    cloned once into `git_cache` (default: inside `folder`). Runs come back in the order of
    `cases`.

    With a `store`, each run is stored the moment it ends, and a case whose stored run has the
    same key (results/keys.py; `identity` gives the agent CLI's version) is not run again.
    `finished` is called with each run as it ends, on the worker that ran it (case_pipeline.py:
    its session and its case's grade made there next).
    """
    sweep_leftovers()  # what runners that died left running (a UI run's step, a killed CLI)
    runner = _AgentRunner(
        cases,
        folder,
        progress=progress,
        run_id=run_id,
        git_cache=git_cache or folder / ".git-cache",
        reuse=_RunReuse(store, identity),
        finished=finished,
    )
    runs: dict[tuple[str, str, int], AgentRun] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        # A run terminated in the Dagster UI is interrupted here, in the step's thread: no
        # queued run starts, and those running end.
        with stop_when_interrupted():
            for jobs in _rounds(cases):
                for ran in pool.map(runner.one, jobs):
                    for run in ran:
                        runs[(run.agent, run.case_key, run.trial)] = run
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [
        runs[(case.agent, case.case_key, trial)]
        for case in cases
        for trial in range(case.trials.count)
    ]


Job = tuple[list[ResolvedCase], int]
"""One invocation: one (case, trial), or a batch of cases sharing a trial."""


def _rounds(cases: list[ResolvedCase]) -> list[list[Job]]:
    """The invocations of `cases`, in dependency waves. AgentV's batch path returns before its
    dependency waves, fail_on_error and budget checks (orchestrator.ts), so a batching target's
    cases all go in the first round, ungated."""
    rounds: list[list[Job]] = [
        [([case], trial) for case in wave for trial in range(case.trials.count)]
        for wave in waves(case for case in cases if not is_batching(case))
    ] or [[]]
    rounds[0] += [(group, t) for group in batch_groups(cases) for t in range(group[0].trials.count)]
    return rounds


def _health(cases: list[ResolvedCase]) -> dict[str, str | None]:
    """Why each agent cannot run, by agent (None: it can)."""
    health: dict[str, str | None] = {}
    for case in cases:
        if isinstance(case.target, CliTarget) and case.agent not in health:
            health[case.agent] = check_health(case.target, case.base_dir)
        elif case.agent not in health:  # an agent CLI without auth: one reason, no 30 failures
            health[case.agent] = auth_problem(case.target)
    return health


class _AgentRunner:
    """The invocations of one `run_agents` call, run from its worker threads."""

    def __init__(
        self,
        cases: list[ResolvedCase],
        folder: Path,
        *,
        progress: Progress,
        run_id: str | None,
        git_cache: Path,
        reuse: _RunReuse,
        finished: Callable[[AgentRun], None] | None,
    ) -> None:
        self.folder = folder
        self.run_id = run_id
        self.git_cache = git_cache
        self.reuse = reuse
        self.finished = finished
        self.health = _health(cases)
        self.gate = RunGate(run_budget(cases))
        # `reused` and `not run` join the tally when they happen.
        self.tracker = LayerProgress(
            "agent runs", sum(case.trials.count for case in cases), progress, ("ok", "error")
        )

    def context(self, case: ResolvedCase, trial: int) -> RunContext:
        artifacts = run_folder(self.folder, case.case_key, case.agent, trial)
        return RunContext(
            artifacts, artifacts / "workspace", trial, run_id=self.run_id, git_cache=self.git_cache
        )

    def one(self, job: Job) -> list[AgentRun]:
        """One invocation, its runs counted and handed on as they end."""
        group, trial = job
        blocked = [case for case in group if case.cannot_run]
        if blocked:  # certain to fail (preflight.py): an error at once, the agent not started
            rest = [case for case in group if not case.cannot_run]
            ran_rest = iter(self.one((rest, trial)) if rest else [])
            refused = [
                _refused_run(case, trial, case.cannot_run or "", setup=False) for case in blocked
            ]
            for case in blocked:
                self.gate.refused(case)
            self.tally(blocked, refused, trial, 1)
            by_key = {run.case_key: run for run in refused}
            return [by_key.get(case.case_key) or next(ran_rest) for case in group]
        unhealthy = self.health.get(group[0].agent)
        if unhealthy:
            ran = [_refused_run(case, trial, unhealthy, setup=False) for case in group]
            for case in group:
                self.gate.refused(case)
        elif is_batching(group[0]):
            ran = self.batch(group, trial)
        else:
            ran = [self.gated(group[0], trial)]
        self.tally(group, ran, trial, len(group))
        return ran

    def batch(self, group: list[ResolvedCase], trial: int) -> list[AgentRun]:
        """A batching target's cases of one eval file, in one invocation."""
        if spent := self.gate.not_run():
            return [_refused_run(case, trial, spent, setup=False, not_run=True) for case in group]
        stored = [self.reuse.stored(case, trial) for case in group]
        if all(stored):
            return [run for run in stored if run is not None]
        batch = batch_context(self.folder, group[0].agent, trial)
        with agent_slot(group[0].target):
            for case in group:
                agent_started((case.agent, case.case_key, trial))
            ran = run_batch([(case, self.context(case, trial)) for case in group], batch)
        ran = [self.reuse.keep(case, run) for case, run in zip(group, ran, strict=True)]
        if self.gate.run_budget_usd is not None:
            self.gate.spent(sum(run_cost(run) or 0.0 for run in ran))
        return ran

    def tally(self, group: list[ResolvedCase], ran: list[AgentRun], trial: int, size: int) -> None:
        """Count each run on the progress line, and hand it to `finished`."""
        for case, run in zip(group, ran, strict=True):
            agent_ended((case.agent, case.case_key, trial))
            if run.not_run:
                self.tracker.advance(f"{case.agent} / {case.test_id}", run.not_run, "not run")
                continue
            label = f" (trial {trial})" if case.trials.count > 1 else ""
            batch_note = f" (batch of {size})" if size > 1 else ""
            status, outcome = self.status(case, run, trial)
            self.tracker.advance(
                f"{case.agent} / {case.test_id}{label}", status + batch_note, outcome
            )
        if self.finished is not None:
            for run in ran:
                self.finished(run)

    def status(self, case: ResolvedCase, run: AgentRun, trial: int) -> tuple[str, str]:
        """A finished run's progress line and the count it adds to."""
        if run.reused is not None:
            age = age_text(now_ms() - run.reused.stored_ms)
            status, outcome = f"reused, stored {age} ago", "reused"
        elif run.error:
            status = f"error: {run.error.message.splitlines()[0][:120]} in {run.duration_ms} ms"
            outcome = "error"
        else:
            status, outcome = f"ok in {run.duration_ms} ms", "ok"
        if run.reused is None and (why := self.reuse.rerun_reason(case, trial)):
            status += f" (ran again: {why})"
        return status, outcome

    def gated(self, case: ResolvedCase, trial: int) -> AgentRun:
        # A spent run budget comes first: every run not started is then not run, not an error
        # (a dependent of a case that was not run too).
        spent = self.gate.not_run()
        if spent:
            return _refused_run(case, trial, spent, setup=False, not_run=True)
        refusal = self.gate.refusal(case)
        if refusal:
            self.gate.refused(case)
            return _refused_run(case, trial, refusal, setup=True)
        stored = self.reuse.stored(case, trial)
        if stored is not None:
            self.gate.finished(case, errored=False, cost_usd=0.0)  # paid for by an earlier run
            return stored
        with agent_slot(case.target):  # the deployment's limit for this agent provider
            agent_started((case.agent, case.case_key, trial))
            run = self.reuse.keep(case, run_agent(case, self.context(case, trial)))
        cost = run_cost(run) if self.gate.counts_cost(case) else None
        self.gate.finished(case, errored=run.failed, cost_usd=cost)
        return run
