"""One pipeline per case: each trial's agent run, then its session on the worker that ran it,
then, once every trial of the case has ended, the case graded there too, as Inspect runs a
sample through solver and scorer. A case's graders need not wait for the last agent of the
run, and the session's messages are graded from memory rather than read back."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.prefetch import prepared_context
from evals_pipeline.layers.agent_runs import run_agents
from evals_pipeline.layers.grades import CaseGrader
from evals_pipeline.layers.sessions import session_of
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.messages import Message
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.progress import Progress, silent
from evals_pipeline.results import Identity, ResultStore, agent_identity

CaseKey = tuple[str, str]
"""A case's (case key, agent)."""


@dataclass
class CaseResults:
    """What the pipeline made: every run in the order of its cases, the sessions of the runs
    that were launched in the same order, and the grades of the cases that have sessions in
    the order of the cases (what `enrich_runs` and `grade_cases` would return)."""

    runs: list[AgentRun]
    sessions: list[Session] = field(default_factory=list)
    grades: list[CaseGrade] = field(default_factory=list)


def run_case_pipeline(
    cases: list[ResolvedCase],
    folder_of: Callable[[str], Path],
    *,
    workers: int,
    sessions: bool,
    grades: bool,
    progress: Progress = silent,
    run_id: str | None = None,
    git_cache: Path | None = None,
    store: ResultStore | None = None,
    identity: Identity = agent_identity,
) -> CaseResults:
    """Run every trial of every case (`run_agents`) `workers` at a time; with `sessions` (or
    `grades`) each run's session is made as it ends, and with `grades` each case is graded once
    its last trial's session is made, on the same worker. `folder_of(layer)` is the folder of
    a layer's files (`agent_runs`, `sessions`)."""
    grader = (
        CaseGrader(cases, progress=progress, store=store, identity=identity) if grades else None
    )
    flow = _Flow(cases, folder_of("sessions"), store, grader) if sessions or grades else None
    with grader if grader is not None else nullcontext():
        runs = run_agents(
            cases,
            folder_of("agent_runs"),
            workers=workers,
            progress=progress,
            run_id=run_id,
            git_cache=git_cache,
            store=store,
            identity=identity,
            finished=flow.finished if flow is not None else None,
        )
    return flow.results(cases, runs) if flow is not None else CaseResults(runs)


class _Flow:
    """What follows each run as it ends: its session, and its case's grade once every trial of
    the case has ended."""

    def __init__(
        self,
        cases: list[ResolvedCase],
        folder: Path,
        store: ResultStore | None,
        grader: CaseGrader | None,
    ) -> None:
        self._cases = {(c.case_key, c.agent): c for c in cases}
        self._folder = folder
        self._store = store
        self._grader = grader
        self._lock = threading.Lock()
        self._ended: dict[CaseKey, dict[int, tuple[Session, Sequence[Message] | None] | None]] = {}
        self._sessions: dict[tuple[str, str, int], Session] = {}
        self._grades: dict[CaseKey, CaseGrade] = {}

    def finished(self, run: AgentRun) -> None:
        """`run_agents`' `finished`: called on the worker that ran `run`."""
        made = None
        if run.not_run is None:
            enriched = session_of(run, self._folder, self._store)
            made = (enriched.session, enriched.messages)
        key = (run.case_key, run.agent)
        case = self._cases[key]
        with self._lock:
            if made is not None:
                self._sessions[(run.case_key, run.agent, run.trial)] = made[0]
            ended = self._ended.setdefault(key, {})
            ended[run.trial] = made
            if len(ended) < case.trials.count:
                return
            del self._ended[key]  # each trial ends once
        if self._grader is not None:
            self._grade(case, ended, run)

    def _grade(
        self,
        case: ResolvedCase,
        ended: dict[int, tuple[Session, Sequence[Message] | None] | None],
        last: AgentRun,
    ) -> None:
        grader = self._grader
        assert grader is not None
        trials = [ended[t] for t in sorted(ended)]
        made = [m for m in trials if m is not None]
        if not made:  # none launched (the run budget): no session, no grade
            grader.not_run(case, last.not_run or "not run")
            return

        def prepare() -> dict[int, GradingContext]:
            contexts = {s.trial: prepared_context(case, s, grader.llm, m) for s, m in made}
            return {trial: ctx for trial, ctx in contexts.items() if ctx is not None}

        grade = grader.grade(case, [s for s, _ in made], prepare)
        with self._lock:
            self._grades[(case.case_key, case.agent)] = grade

    def results(self, cases: list[ResolvedCase], runs: list[AgentRun]) -> CaseResults:
        sessions = [
            self._sessions[(r.case_key, r.agent, r.trial)] for r in runs if r.not_run is None
        ]
        grades = [
            self._grades[(c.case_key, c.agent)]
            for c in cases
            if (c.case_key, c.agent) in self._grades
        ]
        return CaseResults(runs, sessions, grades)
