"""A case's transcript fields made while the case before it is graded.

A code grader's payload needs its trial's transcript encoded (the AgentV messages and trace,
~0.3 s for a 10 MB session, code_grader/payload.py) before the grader starts. Graders are
subprocesses: while one case's graders run, the GIL is free, and a thread encodes the next
case's trials, so a worker does not wait for the two in turn (one worker and long sessions
especially). One case ahead per worker; what is made is small (paths and a summary)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from evals_pipeline.grading.code_grader.payload import prepare_transcript_fields
from evals_pipeline.grading.context import GradingContext, LlmClientSource
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.assertions.spec import walk_assertions
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session

log = logging.getLogger(__name__)

Contexts = dict[int, GradingContext]
"""A case's prepared grading contexts, by trial."""


class TranscriptPrefetch:
    """Grading contexts for `work` (each case with its trials' sessions, in grading order),
    the transcript fields of the next `ahead` cases made on one thread as each is taken."""

    def __init__(
        self,
        work: list[tuple[ResolvedCase, list[Session]]],
        llm: LlmClientSource | None,
        ahead: int = 1,
    ) -> None:
        self._work = work
        self._llm = llm
        self._ahead = ahead
        self._pending: dict[int, Future[Contexts]] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="transcript-prefetch")

    def take(self, index: int) -> Contexts:
        """The contexts of case `index` (made now if they were not yet), and the next cases'
        started."""
        with self._lock:
            for i in range(index, min(index + 1 + self._ahead, len(self._work))):
                if i not in self._pending:
                    self._pending[i] = self._pool.submit(self._prepare, *self._work[i])
            future = self._pending[index]
        return future.result()

    def _prepare(self, case: ResolvedCase, sessions: list[Session]) -> Contexts:
        contexts = {s.trial: prepared_context(case, s, self._llm) for s in sessions}
        return {trial: ctx for trial, ctx in contexts.items() if ctx is not None}

    def __enter__(self) -> TranscriptPrefetch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def prepared_context(
    case: ResolvedCase,
    session: Session,
    llm: LlmClientSource | None,
    messages: Sequence[Message] | None = None,
) -> GradingContext | None:
    """A grading context of `session` with its transcript fields made, when a code grader of
    `case` will ask for them; None otherwise, or when making them failed (they are made again
    when the grader asks, which reports the error). `messages`: see GradingContext."""
    if session.status != "ok" or not needs_transcript_fields(case):
        return None
    ctx = GradingContext(case, session, llm, messages)
    try:
        prepare_transcript_fields(ctx)
    except Exception:
        log.debug("transcript fields of %s not made ahead", case.test_id, exc_info=True)
        return None
    return ctx


def needs_transcript_fields(case: ResolvedCase) -> bool:
    """Whether a code grader of `case` will be fed its transcript (not in a conversation)."""
    return case.conversation is None and any(
        isinstance(spec, CodeGraderAssertion) for _, spec in walk_assertions(case.assertions)
    )
