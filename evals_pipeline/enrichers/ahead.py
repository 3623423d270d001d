"""Sessions made ahead: while a step's agents run, each finished run is enriched on a thread of
its own into the folder of the sessions step of the same Dagster run, and that step takes the
session made instead of parsing the run again. An agent run waits on its process, so a core
is idle meanwhile (at one worker especially); a 10 MB session took ~0.1 s to make, each one
after the last agent had finished.

Only a step in the same process finds what was made (`claim`); any other makes its sessions
itself, as it always did."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from evals_pipeline.enrichers.session import Enriched, enriched_run
from evals_pipeline.made_ahead import MadeAhead
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session

log = logging.getLogger(__name__)

RunKey = tuple[str, str, int]
"""A run's (case key, agent, trial)."""
Then = Callable[[AgentRun, Enriched], None]
"""Called with each run and what was made of it, its messages still in hand."""


class SessionsAhead:
    """Runs enriched one at a time on one thread (a session's parse at a time in memory), each
    session taken at most once by the step that would have made it; `then` is called with each
    run and its session as it is made (grading/ahead.py: its case graded meanwhile, from the
    messages in hand rather than read back from the file)."""

    def __init__(self, then: Then | None = None) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sessions-ahead")
        self._lock = threading.Lock()
        self._made: dict[RunKey, tuple[AgentRun, Future[Session]]] = {}
        self._then = then

    def submit(self, run: AgentRun, session_dir: Path) -> None:
        """Make `run`'s session in `session_dir` soon; a run whose session the step does not
        make (reused with its stored session, or not run) is left alone."""
        if run.not_run is not None or run.reused is not None:
            return
        try:
            future = self._pool.submit(self._make, run, session_dir)
        except RuntimeError:  # closed: the steps it made sessions for are over or replaced
            return
        with self._lock:
            self._made[_key(run)] = (run, future)

    def _make(self, run: AgentRun, session_dir: Path) -> Session:
        made = enriched_run(run, session_dir)
        if self._then is not None:
            try:
                self._then(run, made)
            except Exception:  # only what is made ahead is lost: its step makes it
                log.warning("after the session of %s was made ahead", _key(run), exc_info=True)
        return made.session

    def take(self, run: AgentRun) -> Session | None:
        """The session made ahead from this very run record, once it is made; None when none
        was, when making it failed (the step makes it again and reports the error), or when it
        was made from another record of the run."""
        with self._lock:
            entry = self._made.pop(_key(run), None)
        if entry is None:
            return None
        made_from, future = entry
        try:
            session = future.result()  # also when unused: the step writes where it wrote
        except Exception:
            log.debug("session of %s made ahead failed", _key(run), exc_info=True)
            return None
        return session if made_from == run else None

    def close(self) -> None:
        """Stop: what is queued is dropped, what is being made is finished."""
        self._pool.shutdown(wait=True, cancel_futures=True)


_steps: MadeAhead[SessionsAhead] = MadeAhead()


def start(folder: Path, then: Then | None = None) -> SessionsAhead:
    """Sessions made ahead for the sessions step whose folder is `folder` (`then`: see
    SessionsAhead)."""
    return _steps.start(folder, SessionsAhead(then))


def claim(folder: Path) -> SessionsAhead | None:
    """The sessions made ahead for the step whose folder is `folder`, if this process made
    any; the caller closes it."""
    return _steps.claim(folder)


def _key(run: AgentRun) -> RunKey:
    return (run.case_key, run.agent, run.trial)
