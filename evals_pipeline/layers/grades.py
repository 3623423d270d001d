"""Grades: every trial's session graded and each case's trials aggregated; stored grades
reused while their key is unchanged."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path

from evals_pipeline.grading import aggregate_trials, grade_trial
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.prefetch import TranscriptPrefetch
from evals_pipeline.layers.sessions import sessions_by_partition
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.session import Session
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.progress import LayerProgress, Progress, silent
from evals_pipeline.results import (
    CaseKeys,
    Identity,
    ResultStore,
    agent_identity,
    case_keys,
)
from evals_pipeline.results.regrading import RestoredWorkspaces
from evals_pipeline.stopping import stop_when_interrupted, stopping
from evals_pipeline.workspaces import WorkspaceRemovals, should_remove


class CaseGrader:
    """Grades cases one at a time, from any thread, as the grades layer does: a stored grade
    reused while its key is unchanged, each grade made stored, the graded workspaces the
    cleanup policy does not keep removed, and each case counted on the `grades` progress line.

    When any of `cases` has LLM graders (or a code grader using the target proxy), one set of
    LLM clients serves them all while the grader is open: scripted judges' model servers start
    once, and their request logs go to `log_dir` when given."""

    def __init__(
        self,
        cases: list[ResolvedCase],
        *,
        progress: Progress = silent,
        log_dir: Path | None = None,
        store: ResultStore | None = None,
        identity: Identity = agent_identity,
    ) -> None:
        self._targets: dict[str, LlmTargetSpec] = {}
        for case in cases:
            for name, spec in case.llm_targets.items():
                self._targets.setdefault(name, spec)
        self._log_dir = log_dir
        self._store = store
        self._identity = identity
        self._tracker = LayerProgress("grades", len(cases), progress, ("pass", "fail", "error"))
        self._stack = ExitStack()
        self._removals = WorkspaceRemovals()
        self.llm: LlmClients | None = None

    def __enter__(self) -> CaseGrader:
        self._stack.enter_context(self._removals)
        if self._targets:
            self.llm = self._stack.enter_context(LlmClients(self._targets, log_dir=self._log_dir))
        return self

    def __exit__(self, *_: object) -> None:
        self._stack.close()

    def grade(
        self,
        case: ResolvedCase,
        sessions: list[Session],
        prepare: Callable[[], Mapping[int, GradingContext]] | None = None,
    ) -> CaseGrade:
        """The grade of `case` from its trials' `sessions` (in trial order): stored, else made
        (`prepare` gives grading contexts made ahead, by trial)."""
        grade = _stored_grade(self._store, case, sessions, self._identity)
        if grade is None:
            grade = _grade_case(
                case,
                sessions,
                self._removals,
                llm=self.llm,
                store=self._store,
                identity=self._identity,
                prepared=prepare() if prepare is not None else None,
            )
        reused = " (reused)" if grade.reused is not None else ""
        self._tracker.advance(
            f"{case.agent} / {case.test_id}",
            f"{grade.verdict} (score {grade.score:.2f}){reused}",
            grade.verdict,
        )
        return grade

    def not_run(self, case: ResolvedCase, reason: str) -> None:
        """Count a case none of whose trials was launched (the run budget): it has no grade."""
        self._tracker.advance(f"{case.agent} / {case.test_id}", reason, "not run")


def grade_cases(
    cases: list[ResolvedCase],
    sessions: list[Session],
    *,
    workers: int,
    progress: Progress = silent,
    log_dir: Path | None = None,
    store: ResultStore | None = None,
    identity: Identity = agent_identity,
) -> list[CaseGrade]:
    """Grade every trial's session and aggregate the trials of each (case, agent), `workers`
    cases at a time (CaseGrader: stored grades, LLM clients, clean-up).

    With a `store`, each trial's grade is stored as it is made; a trial whose session was reused
    reuses its stored grade while its key (graders, threshold, its run) is unchanged, and the
    case's grade is aggregated again from its trials by the case's current `trials` rules.
    """
    by_partition = sessions_by_partition(sessions)
    # A case whose runs were not launched (run budget) has no session and no grade.
    cases = [c for c in cases if (c.case_key, c.agent) in by_partition]
    work = [
        (case, sorted(by_partition[(case.case_key, case.agent)], key=lambda s: s.trial))
        for case in cases
    ]
    grader = CaseGrader(cases, progress=progress, log_dir=log_dir, store=store, identity=identity)
    with (
        grader,
        TranscriptPrefetch(work, grader.llm, ahead=max(1, workers)) as prefetch,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
        # A run terminated in the Dagster UI is interrupted here: the graders running end
        # before the pool waits for them.
        stop_when_interrupted(),
    ):
        return list(
            pool.map(lambda i: grader.grade(*work[i], partial(prefetch.take, i)), range(len(work)))
        )


def _stored_trials(
    store: ResultStore | None, case: ResolvedCase, sessions: list[Session], keys: CaseKeys
) -> dict[int, tuple[TrialGrade, Reuse]]:
    """The stored grades of the trials whose session was reused and whose trial grade key
    (graders, threshold, that trial's run) is unchanged, by trial: a session made again is
    graded again."""
    if store is None or not case.cache:
        return {}
    found = {}
    for session in sessions:
        if session.reused is None:
            continue
        hit = store.trial(case.case_key, case.agent, keys.trial_grade(session.trial))
        if hit is not None:
            found[session.trial] = hit
    return found


def _stored_grade(
    store: ResultStore | None, case: ResolvedCase, sessions: list[Session], identity: Identity
) -> CaseGrade | None:
    """The grade of `case` aggregated afresh from its stored trial grades, when every trial's
    grade is stored: how trials add up (strategy, cost limit) is never taken from the store."""
    if store is None or not case.cache or not sessions:
        return None
    keys = case_keys(case, identity)
    stored = _stored_trials(store, case, sessions, keys)
    if len(stored) < len(sessions):
        return None
    oldest = min((reuse for _, reuse in stored.values()), key=lambda r: r.stored_ms)
    grade = aggregate_trials(case, [trial for trial, _ in stored.values()])
    return grade.model_copy(update={"result_key": keys.grade, "reused": oldest})


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
    """Grade each trial's session (`prepared`: contexts made ahead, by trial), or take its
    stored trial grade, and aggregate them; each trial grade made and the case's grade stored
    in `store` when given; the graded workspaces the cleanup policy does not keep removed."""
    # Keyed before the graders run, on the files they will read.
    keys = case_keys(case, identity) if store is not None else None
    stored = {} if keys is None else _stored_trials(store, case, sessions, keys)
    ready = prepared or {}
    graded: list[TrialGrade] = []
    with RestoredWorkspaces(store, case, keys) as restored:
        for s in sessions:
            if s.trial in stored:
                graded.append(stored[s.trial][0])
                continue
            session, ctx = restored.live(s, ready.get(s.trial))
            graded.append(grade_trial(case, session, s.trial, llm=llm, ctx=ctx))
    grade = aggregate_trials(case, graded)
    if store is not None and keys is not None:
        grade = grade.model_copy(update={"result_key": keys.grade})
        for trial in graded:
            if trial.trial not in stored:
                store.put_trial(case.case_key, case.agent, keys.trial_grade(trial.trial), trial)
        store.put("grade", grade)
    _clean_up(case, sessions, [t.verdict for t in graded], removals, store, keys)
    return grade


def _clean_up(
    case: ResolvedCase,
    sessions: list[Session],
    verdicts: list[str],
    removals: WorkspaceRemovals,
    store: ResultStore | None = None,
    keys: CaseKeys | None = None,
) -> None:
    """Delete graded workspaces the cleanup policy does not keep (default: keep failures),
    each kept first in `store` as its run's final state when its run was stored."""
    policy = case.workspace.cleanup if case.workspace else "on_success"
    if case.keep_workspaces:
        policy = "never"
    for session, verdict in zip(sessions, verdicts, strict=True):
        passed = None if verdict == "error" else verdict == "pass"
        if not session.workspace_path or not should_remove(policy, passed):
            continue
        keep = None
        if store is not None and keys is not None and session.status == "ok":
            run_key = keys.run(session.trial)
            keep = partial(_keep_state, store, case, run_key)
        removals.remove(Path(session.workspace_path), keep)


def _keep_state(store: ResultStore, case: ResolvedCase, run_key: str, workspace: Path) -> None:
    """Keep a workspace's final state before it is deleted, unless the run is stopping: a large
    one takes seconds to compress, and an interrupted run ends within a few (stopping.py)."""
    if not stopping():
        store.keep_workspace(case.case_key, case.agent, run_key, workspace)
