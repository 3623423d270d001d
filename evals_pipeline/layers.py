"""What each layer does over many partitions at once, without Dagster: the asset bodies call
these, and so can tests and scripts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.adapters.cli import check_health
from evals_pipeline.adapters.cli_batch import batch_context, batch_groups, is_batching, run_batch
from evals_pipeline.adapters.identity import auth_problem
from evals_pipeline.enrichers import enrich_run, run_cost
from evals_pipeline.enrichers.ahead import SessionsAhead
from evals_pipeline.grading import aggregate_trials, grade_trial
from evals_pipeline.grading.ahead import GradesAhead
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.prefetch import TranscriptPrefetch
from evals_pipeline.judging import (
    PairReadings,
    TrialVotes,
    compare_agents,
    judge_case,
    judged_trial,
    merge_votes,
    read_pairs,
    trial_votes,
)
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.reuse import age_text
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import CliTarget, LlmTargetSpec
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
    votes_key,
)
from evals_pipeline.scheduling import RunGate, run_budget, waves
from evals_pipeline.workspaces import WorkspaceRemovals, should_remove


def run_folder(folder: Path, case_key: str, agent: str, trial: int) -> Path:
    """The artifact folder of one trial of one (case, agent) inside a step's folder."""
    return folder / agent / case_key / f"trial-{trial}"


def _refused_run(
    case: ResolvedCase, trial: int, reason: str, *, setup: bool, not_run: bool = False
) -> AgentRun:
    """A run that never started: an unhealthy target, (`setup`) the gate said no, or
    (`not_run`) the run budget was spent, which is no error."""
    now = now_ms()
    return AgentRun(
        case_key=case.case_key,
        agent=case.agent,
        trial=trial,
        start_ms=now,
        end_ms=now,
        error=None if not_run else reason,
        setup_failed=setup,
        not_run=reason if not_run else None,
    )


class _RunReuse:
    """The result store as `run_agents` sees it: stored runs to reuse, new runs to keep."""

    def __init__(self, store: ResultStore | None, identity: Identity) -> None:
        self.store = store
        self.identity = identity
        self._keys: dict[tuple[str, str], CaseKeys] = {}

    def keys(self, case: ResolvedCase) -> CaseKeys:
        partition = (case.case_key, case.agent)
        if partition not in self._keys:
            self._keys[partition] = case_keys(case, self.identity)
        return self._keys[partition]

    def stored(self, case: ResolvedCase, trial: int) -> AgentRun | None:
        """The stored run of this trial, when the cache is on and its key is unchanged.

        A run whose workspace was cleaned up is reused only when its grade is too: graders
        that have changed may read the workspace.
        """
        if self.store is None or not case.cache:
            return None
        keys = self.keys(case)
        run = self.store.run(case.case_key, case.agent, keys.run(trial))
        if run is None or run.workspace_path is None or Path(run.workspace_path).exists():
            return run
        return run if self.store.grade(case.case_key, case.agent, keys.grade) else None

    def keep(self, case: ResolvedCase, run: AgentRun) -> AgentRun:
        """`run` with its key, stored the moment it ended."""
        if self.store is None:
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
    `finished` is called with each run as it ends (sessions_ahead: its session made meanwhile).
    """
    sweep_leftovers()  # what runners that died left running (a UI run's step, a killed CLI)
    health: dict[str, str | None] = {}
    for case in cases:
        if isinstance(case.target, CliTarget) and case.agent not in health:
            health[case.agent] = check_health(case.target, case.base_dir)
        elif case.agent not in health:  # an agent CLI without auth: one reason, no 30 failures
            health[case.agent] = auth_problem(case.target)
    gate = RunGate(run_budget(cases))
    # `reused` and `not run` join the tally when they happen.
    tracker = LayerProgress(
        "agent runs", sum(case.trials.count for case in cases), progress, ("ok", "error")
    )
    reuse = _RunReuse(store, identity)

    def context(case: ResolvedCase, trial: int) -> RunContext:
        artifacts = run_folder(folder, case.case_key, case.agent, trial)
        return RunContext(
            artifacts,
            artifacts / "workspace",
            trial,
            run_id=run_id,
            git_cache=git_cache or folder / ".git-cache",
        )

    def one(job: tuple[list[ResolvedCase], int]) -> list[AgentRun]:
        """One invocation: one (case, trial), or a batch of cases sharing a trial."""
        group, trial = job
        unhealthy = health.get(group[0].agent)
        if unhealthy:
            ran = [_refused_run(case, trial, unhealthy, setup=False) for case in group]
            for case in group:
                gate.refused(case)
        elif is_batching(group[0]) and (spent := gate.not_run()):
            ran = [_refused_run(case, trial, spent, setup=False, not_run=True) for case in group]
        elif is_batching(group[0]):
            stored = [reuse.stored(case, trial) for case in group]
            if all(stored):
                ran = [run for run in stored if run is not None]
            else:
                batch = batch_context(folder, group[0].agent, trial)
                with agent_slot(group[0].target):
                    ran = run_batch([(case, context(case, trial)) for case in group], batch)
                ran = [reuse.keep(case, run) for case, run in zip(group, ran, strict=True)]
                if gate.run_budget_usd is not None:
                    gate.spent(sum(run_cost(run) or 0.0 for run in ran))
        else:
            ran = [gated(group[0], trial)]
        for case, run in zip(group, ran, strict=True):
            if run.not_run:
                tracker.advance(f"{case.agent} / {case.test_id}", run.not_run, "not run")
                continue
            label = f" (trial {trial})" if case.trials.count > 1 else ""
            batch_note = f" (batch of {len(group)})" if len(group) > 1 else ""
            if run.reused is not None:
                age = age_text(now_ms() - run.reused.stored_ms)
                status, outcome = f"reused, stored {age} ago", "reused"
            elif run.error:
                status = f"error: {run.error.splitlines()[0][:120]} in {run.duration_ms} ms"
                outcome = "error"
            else:
                status, outcome = f"ok in {run.duration_ms} ms", "ok"
            tracker.advance(f"{case.agent} / {case.test_id}{label}", status + batch_note, outcome)
        if finished is not None:
            for run in ran:
                finished(run)
        return ran

    def gated(case: ResolvedCase, trial: int) -> AgentRun:
        # A spent run budget comes first: every run not started is then not run, not an error
        # (a dependent of a case that was not run too).
        spent = gate.not_run()
        if spent:
            return _refused_run(case, trial, spent, setup=False, not_run=True)
        refusal = gate.refusal(case)
        if refusal:
            gate.refused(case)
            return _refused_run(case, trial, refusal, setup=True)
        stored = reuse.stored(case, trial)
        if stored is not None:
            gate.finished(case, errored=False, cost_usd=0.0)  # paid for by an earlier run
            return stored
        with agent_slot(case.target):  # the deployment's limit for this agent provider
            run = reuse.keep(case, run_agent(case, context(case, trial)))
        cost = run_cost(run) if gate.counts_cost(case) else None
        gate.finished(case, errored=run.failed, cost_usd=cost)
        return run

    # AgentV's batch path returns before its dependency waves, fail_on_error and budget checks
    # (orchestrator.ts), so a batching target's cases all go in the first round, ungated.
    rounds: list[list[tuple[list[ResolvedCase], int]]] = [
        [([case], trial) for case in wave for trial in range(case.trials.count)]
        for wave in waves(case for case in cases if not is_batching(case))
    ] or [[]]
    rounds[0] += [(group, t) for group in batch_groups(cases) for t in range(group[0].trials.count)]
    runs: dict[tuple[str, str, int], AgentRun] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for jobs in rounds:
            for ran in pool.map(one, jobs):
                for run in ran:
                    runs[(run.agent, run.case_key, run.trial)] = run
    return [
        runs[(case.agent, case.case_key, trial)]
        for case in cases
        for trial in range(case.trials.count)
    ]


def sessions_ahead(ahead: SessionsAhead, folder: Path) -> Callable[[AgentRun], None]:
    """`run_agents`' `finished`: each run's session made by `ahead` while the other runs go on,
    where `enrich_runs` into `folder` would make it."""
    return lambda run: ahead.submit(run, run_folder(folder, run.case_key, run.agent, run.trial))


def grades_ahead(
    cases: list[ResolvedCase],
    *,
    workers: int,
    store: ResultStore | None = None,
    identity: Identity = agent_identity,
) -> GradesAhead:
    """Grades made as `grade_cases` makes them (without LLM clients: only cases that call no
    model are graded ahead), `workers` at a time."""
    grade = partial(_grade_case, llm=None, store=store, identity=identity)
    return GradesAhead(cases, grade, workers=workers)


def grade_when_made(grades: GradesAhead) -> Callable[[AgentRun, Session], None]:
    """SessionsAhead's `then`: each session made ahead, as `enrich_runs` records it, handed to
    `grades`."""
    return lambda run, made: grades.session_made(_session_record(made, run))


def _session_record(made: Session, run: AgentRun, store: ResultStore | None = None) -> Session:
    """The sessions step's record of `run`'s session `made`: with its run's result key, stored
    in `store` when given, then marked reused as its run is."""
    made = made.model_copy(update={"result_key": run.result_key})
    if store is not None:
        store.put("session", made)
    return made.model_copy(update={"reused": run.reused})


def enrich_runs(
    runs: list[AgentRun],
    folder: Path,
    store: ResultStore | None = None,
    ahead: SessionsAhead | None = None,
) -> list[Session]:
    """Enrich every run that was launched (not the runs the run budget left out), writing each
    session's messages once as Parquet under `folder`; a session `ahead` made of the same run
    record while the agents ran (sessions_ahead) is taken as made.

    With a `store`, each session is stored as it is made, and a reused run's stored session is
    reused with it (its messages stay where they were first written).
    """

    def one(run: AgentRun) -> Session:
        if store is not None and run.reused is not None and run.result_key is not None:
            stored = store.session(run.case_key, run.agent, run.result_key)
            if stored is not None:
                return stored
        made = ahead.take(run) if ahead is not None else None
        if made is None:
            made = enrich_run(run, run_folder(folder, run.case_key, run.agent, run.trial))
        return _session_record(made, run, store)

    return [one(run) for run in runs if run.not_run is None]


def grade_cases(
    cases: list[ResolvedCase],
    sessions: list[Session],
    *,
    workers: int,
    progress: Progress = silent,
    log_dir: Path | None = None,
    store: ResultStore | None = None,
    identity: Identity = agent_identity,
    ahead: GradesAhead | None = None,
) -> list[CaseGrade]:
    """Grade every trial's session and aggregate the trials of each (case, agent); a grade
    `ahead` made of the same case and sessions while the agents ran (grades_ahead) is taken as
    made.

    With a `store`, each grade is stored as it is made; a case whose sessions were all reused
    reuses its stored grade too while its grade key (graders, threshold, runs) is unchanged.

    When any case has LLM graders (or a code grader using the target proxy), one set of LLM
    clients serves the whole step: scripted judges' model servers start once, and their request
    logs go to `log_dir` when given.
    """
    by_partition = _sessions_by_partition(sessions)
    # A case whose runs were not launched (run budget) has no session and no grade.
    cases = [c for c in cases if (c.case_key, c.agent) in by_partition]
    llm_targets: dict[str, LlmTargetSpec] = {}
    for case in cases:
        for name, spec in case.llm_targets.items():
            llm_targets.setdefault(name, spec)
    tracker = LayerProgress("grades", len(cases), progress, ("pass", "fail", "error"))

    work = [
        (case, sorted(by_partition.get((case.case_key, case.agent), []), key=lambda s: s.trial))
        for case in cases
    ]
    # Taken before the step's own work is laid out: a case graded ahead is not prefetched.
    made = {} if ahead is None else {i: ahead.take(*work[i]) for i in range(len(work))}
    own = {i: n for n, i in enumerate(i for i in range(len(work)) if made.get(i) is None)}

    def grade_all(llm: LlmClients | None) -> list[CaseGrade]:
        def one(index: int) -> CaseGrade:
            case, trials = work[index]
            grade = made.get(index)
            if grade is None:
                grade = _stored_grade(store, case, trials, identity)
            if grade is None:
                prepared = prefetch.take(own[index])
                grade = _grade_case(
                    case,
                    trials,
                    removals,
                    llm=llm,
                    store=store,
                    identity=identity,
                    prepared=prepared,
                )
            reused = " (reused)" if grade.reused is not None else ""
            tracker.advance(
                f"{case.agent} / {case.test_id}",
                f"{grade.verdict} (score {grade.score:.2f}){reused}",
                grade.verdict,
            )
            return grade

        with (
            WorkspaceRemovals() as removals,
            TranscriptPrefetch([work[i] for i in own], llm, ahead=max(1, workers)) as prefetch,
            ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
        ):
            return list(pool.map(one, range(len(work))))

    if not llm_targets:
        return grade_all(None)
    with LlmClients(llm_targets, log_dir=log_dir) as clients:
        return grade_all(clients)


def _stored_grade(
    store: ResultStore | None, case: ResolvedCase, sessions: list[Session], identity: Identity
) -> CaseGrade | None:
    """The stored grade of `case` under its grade key, when the cache is on and every session
    graded was itself reused (a run made again is graded again)."""
    if store is None or not case.cache or not sessions:
        return None
    if any(s.reused is None for s in sessions):
        return None
    return store.grade(case.case_key, case.agent, case_keys(case, identity).grade)


def _grade_case(
    case: ResolvedCase,
    sessions: list[Session],
    removals: WorkspaceRemovals,
    *,
    llm: LlmClients | None,
    store: ResultStore | None,
    identity: Identity,
    prepared: Mapping[int, GradingContext] | None = None,
) -> CaseGrade:
    """Grade each trial's session (`prepared`: contexts made ahead, by trial) and aggregate
    them; stored in `store` when given, under the case's grade key; the graded workspaces the
    cleanup policy does not keep removed."""
    # Keyed before the graders run, on the files they will read.
    key = case_keys(case, identity).grade if store is not None else None
    ready = prepared or {}
    graded = [grade_trial(case, s, s.trial, llm=llm, ctx=ready.get(s.trial)) for s in sessions]
    grade = aggregate_trials(case, graded).model_copy(update={"result_key": key})
    if store is not None:
        store.put("grade", grade)
    _clean_up(case, sessions, [t.verdict for t in graded], removals)
    return grade


def _clean_up(
    case: ResolvedCase, sessions: list[Session], verdicts: list[str], removals: WorkspaceRemovals
) -> None:
    """Delete graded workspaces the cleanup policy does not keep (default: keep failures)."""
    policy = case.workspace.cleanup if case.workspace else "on_success"
    if case.keep_workspaces:
        policy = "never"
    for session, verdict in zip(sessions, verdicts, strict=True):
        passed = None if verdict == "error" else verdict == "pass"
        if session.workspace_path and should_remove(policy, passed):
            removals.remove(Path(session.workspace_path))


def panel_judges(
    judging: JudgingSpec, judges: Mapping[str, LlmTargetSpec], provider: str | None = None
) -> dict[str, LlmTargetSpec]:
    """The panel's judge targets in panel order; only those of `provider` when given."""
    named = {name: judges[name] for name in judging.panel}
    return {n: t for n, t in named.items() if provider is None or t.provider == provider}


def collect_votes(
    cases: list[ResolvedCase],
    sessions: list[Session],
    grades: list[CaseGrade],
    judging: JudgingSpec,
    judges: Mapping[str, LlmTargetSpec],
    *,
    workers: int,
    folder: Path | None = None,
    progress: Progress = silent,
    store: ResultStore | None = None,
) -> list[TrialVotes]:
    """`judges` (the panel, or its judges of one provider) on every dimension of every trial
    that ran and was graded; scripted judges' request logs go to `folder`. Votes on a trial
    whose grade, panel and judges are unchanged are reused from `store`."""
    if not judges:
        return []
    by_partition = _sessions_by_partition(sessions)
    grade_of = {(g.case_key, g.agent): g for g in grades}
    jobs: list[tuple[ResolvedCase, Session, TrialGrade]] = []
    for case in cases:
        grade = grade_of.get((case.case_key, case.agent))
        graded = {t.trial: t for t in grade.trials} if grade else {}
        for session in by_partition.get((case.case_key, case.agent), []):
            trial = graded.get(session.trial)
            if trial is not None and judged_trial(session, trial):
                jobs.append((case, session, trial))
    tracker = LayerProgress(
        f"votes of {', '.join(judges)}", len(jobs), progress, ("valid", "no valid vote")
    )
    with LlmClients(judges, log_dir=folder) as clients:
        panel = [clients.get(name) for name in judges]

        def one(job: tuple[ResolvedCase, Session, TrialGrade]) -> TrialVotes:
            case, session, trial = job
            grade = grade_of[(case.case_key, case.agent)]
            key = None
            # An errored grade is redone next time (its run may be too): its votes are not kept.
            if store and grade.result_key and grade.verdict != "error" and case.cache:
                key = votes_key(grade.result_key, session.trial, judging, judges)
            votes = store.votes(case.case_key, case.agent, key) if store and key else None
            reused = votes is not None
            if votes is None:
                votes = trial_votes(case, session, trial, panel, judging)
                if store is not None and key is not None:
                    store.put_votes(key, votes)
            label = f" (trial {session.trial})" if case.trials.count > 1 else ""
            tracker.advance(
                f"{', '.join(judges)} on {case.agent} / {case.test_id}{label}",
                f"{votes.n_valid} valid votes" + (" (reused)" if reused else ""),
                "valid" if votes.n_valid else "no valid vote",
            )
            return votes

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return list(pool.map(one, jobs))


def judge_cases(
    cases: list[ResolvedCase],
    sessions: list[Session],
    grades: list[CaseGrade],
    judging: JudgingSpec | None,
    votes: Iterable[TrialVotes] = (),
    *,
    workers: int,
    progress: Progress = silent,
) -> list[CaseJudgment]:
    """Judge every (case, agent) from the panel's votes (collected whole or one provider at a
    time), the heuristics and their blend, and attribute each failed trial."""
    by_partition = _sessions_by_partition(sessions)
    cases = [c for c in cases if (c.case_key, c.agent) in by_partition]  # not run: no sessions
    grade_of = {(g.case_key, g.agent): g for g in grades}
    merged = merge_votes(votes, judging.panel if judging else ())
    tracker = LayerProgress("judgments", len(cases), progress, ("passed", "failed"))

    def one(case: ResolvedCase) -> CaseJudgment:
        key = (case.case_key, case.agent)
        ran = by_partition.get(key, [])
        cast = {s.trial: merged[(*key, s.trial)] for s in ran if (*key, s.trial) in merged}
        judged = judge_case(case, ran, grade_of.get(key), judging, cast)
        failed = any(t.failure for t in judged.trials)
        tracker.advance(
            f"judged {case.agent} / {case.test_id}",
            _brief(judged),
            "failed" if failed else "passed",
        )
        return judged

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, cases))


def collect_readings(
    cases: list[ResolvedCase],
    sessions: list[Session],
    judging: JudgingSpec,
    judges: Mapping[str, LlmTargetSpec],
    *,
    folder: Path | None = None,
    progress: Progress = silent,
) -> list[PairReadings]:
    """`judges` (the panel, or its judges of one provider) read every pair of the agents of
    every case, A/B then B/A."""
    if not judges:
        return []
    by_case = _cases_by_key(cases)
    by_partition = _sessions_by_partition(sessions)
    readings: list[PairReadings] = []
    tracker = LayerProgress(
        f"pairwise readings of {', '.join(judges)}", len(by_case), progress, ("read", "no pairs")
    )
    with LlmClients(judges, log_dir=folder) as clients:
        panel = [clients.get(name) for name in judges]
        for case_key, group in by_case.items():
            ran = [s for c in group for s in by_partition.get((case_key, c.agent), [])]
            pairs = read_pairs(group, ran, panel, judging)
            readings += pairs
            tracker.advance(
                f"{', '.join(judges)} read {group[0].test_id}",
                f"{len(pairs)} pairs",
                "read" if pairs else "no pairs",
            )
    return readings


def compare_cases(
    cases: list[ResolvedCase],
    judging: JudgingSpec,
    readings: Iterable[PairReadings],
    *,
    progress: Progress = silent,
) -> list[CasePairwise]:
    """Every case's pairwise verdicts from its pairs' readings (whole or one provider at a time)."""
    by_case = _cases_by_key(cases)
    read: dict[str, list[PairReadings]] = {key: [] for key in by_case}
    for pair in readings:
        read.setdefault(pair.case_key, []).append(pair)
    compared: list[CasePairwise] = []
    tracker = LayerProgress("pairwise verdicts", len(by_case), progress, ("compared", "no pairs"))
    for case_key, group in by_case.items():
        result = compare_agents(case_key, read[case_key], judging)
        compared.append(result)
        winners = ", ".join(
            f"{p.agent_a} vs {p.agent_b}: {p.winner or 'tie'}" for p in result.pairs
        )
        tracker.advance(
            f"compared {group[0].test_id}",
            winners or "no pairs",
            "compared" if result.pairs else "no pairs",
        )
    return compared


def _cases_by_key(cases: list[ResolvedCase]) -> dict[str, list[ResolvedCase]]:
    by_case: dict[str, list[ResolvedCase]] = {}
    for case in cases:
        by_case.setdefault(case.case_key, []).append(case)
    return by_case


def _sessions_by_partition(sessions: list[Session]) -> dict[tuple[str, str], list[Session]]:
    by_partition: dict[tuple[str, str], list[Session]] = {}
    for session in sessions:
        by_partition.setdefault((session.case_key, session.agent), []).append(session)
    return by_partition


def _brief(judged: CaseJudgment) -> str:
    passed = [d.dimension for t in judged.trials[:1] for d in t.dimensions if d.passed is True]
    failure = next((t.failure.primary for t in judged.trials if t.failure), None)
    text = f"{len(passed)} dimensions passed"
    return text + (f"; failure: {failure}" if failure else "")
