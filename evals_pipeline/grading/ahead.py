"""Grades made ahead: while a step's agents run, each case whose sessions were all made ahead
(enrichers/ahead.py) is graded on a thread of its own, and the grades step of the same Dagster
run takes the grade instead of grading the case again. Otherwise every case's graders waited
for the last agent of the step: with agents that wait on a model for minutes and graders that
run a project's tests, the whole step's grading came after its last agent, where AgentV grades
each case as its agent ends.

Only cases that call no model are graded ahead (`calls_no_model`: LLM graders and the target
proxy use the grades step's clients and its pool). The grades step takes a grade only when it
was made from the very case and sessions the step has; it grades any other case itself, as it
always did. Only a step in the same process finds what was made (`claim`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.prefetch import prepared_context
from evals_pipeline.made_ahead import MadeAhead
from evals_pipeline.models.assertions import (
    CompositeAssertion,
    LlmAggregator,
    LlmGraderBase,
    walk_assertions,
)
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session
from evals_pipeline.workspaces import WorkspaceRemovals

log = logging.getLogger(__name__)

CaseKey = tuple[str, str]
"""A case's (case key, agent)."""


class Grader(Protocol):
    """Grades a case's sessions (in trial order) as the grades step does, its graded workspaces
    cleaned up through the removals given; `prepared`: grading contexts made ahead, by trial."""

    def __call__(
        self,
        case: ResolvedCase,
        sessions: list[Session],
        removals: WorkspaceRemovals,
        *,
        prepared: Mapping[int, GradingContext],
    ) -> CaseGrade: ...


class GradesAhead:
    """The cases of `cases` that call no model (`calls_no_model`), each graded `workers` at a
    time once its last trial's session is made (`session_made`), and taken at most once by the
    grades step."""

    def __init__(self, cases: list[ResolvedCase], grade: Grader, *, workers: int) -> None:
        self._cases = {(c.case_key, c.agent): c for c in cases if calls_no_model(c)}
        self._grade = grade
        self._pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="grades-ahead")
        self._removals = WorkspaceRemovals()
        self._lock = threading.Lock()
        self._sessions: dict[CaseKey, dict[int, Session]] = {}
        self._prepared: dict[CaseKey, dict[int, GradingContext]] = {}
        self._made: dict[CaseKey, tuple[ResolvedCase, list[Session], Future[CaseGrade]]] = {}

    def session_made(self, session: Session, messages: Sequence[Message] | None = None) -> None:
        """Note a session as the sessions step will record it; its case is graded once every
        trial's session is made. `messages`, the session's as its file holds them, make its
        code graders' transcript fields now, while they are in hand: not read back from the
        file, and not kept in memory until the case's turn comes."""
        key = (session.case_key, session.agent)
        case = self._cases.get(key)
        if case is None:
            return
        ctx = prepared_context(case, session, None, messages) if messages is not None else None
        with self._lock:
            made = self._sessions.setdefault(key, {})
            made[session.trial] = session
            prepared = self._prepared.setdefault(key, {})
            if ctx is not None:
                prepared[session.trial] = ctx
            if len(made) < case.trials.count:
                return
            del self._sessions[key], self._prepared[key]  # each trial's session is made once
            trials = [made[t] for t in sorted(made)]
            future = self._pool.submit(self._grade, case, trials, self._removals, prepared=prepared)
            self._made[key] = (case, trials, future)

    def take(self, case: ResolvedCase, sessions: list[Session]) -> CaseGrade | None:
        """The grade made ahead of `case` from these very sessions (in trial order), once it
        is made; None when none was, when making it failed (the step grades the case again and
        reports the error), or when it was made from another case or other sessions."""
        with self._lock:
            entry = self._made.pop((case.case_key, case.agent), None)
        if entry is None:
            return None
        made_case, made_sessions, future = entry
        try:
            grade = future.result()  # also when unused: its workspaces' clean-up is done then
        except Exception:
            log.debug("grade of %s made ahead failed", case.test_id, exc_info=True)
            return None
        return grade if made_case == case and made_sessions == sessions else None

    def close(self) -> None:
        """Stop: what is queued is dropped, what is being graded is finished, and so are the
        workspace removals."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._removals.close()


def calls_no_model(case: ResolvedCase) -> bool:
    """Whether no grader of `case` may ask a model: it has no LLM targets (which the target
    proxy brings too), no LLM grader and no composite with an LLM aggregator."""
    return not case.llm_targets and not any(
        isinstance(spec, LlmGraderBase)
        or (isinstance(spec, CompositeAssertion) and isinstance(spec.aggregator, LlmAggregator))
        for _, spec in walk_assertions(case.assertions)
    )


_steps: MadeAhead[GradesAhead] = MadeAhead()


def start(folder: Path, ahead: GradesAhead) -> GradesAhead:
    """`ahead` made for the grades step whose folder is `folder`."""
    return _steps.start(folder, ahead)


def claim(folder: Path) -> GradesAhead | None:
    """The grades made ahead for the step whose folder is `folder`, if this process made any;
    the caller closes it."""
    return _steps.claim(folder)
