"""Ctrl-C and SIGTERM during `evals-pipeline run`: the first signal stops the run (no agent or
grader starts, those running end: stopping.py), keeps what finished (stored as each ended, so
the same command resumes) and ends the command within seconds with one line and 130 or 143; a
second one ends everything at once.

The command works on a thread of its own so the signals reach our handlers: on the main thread,
Dagster would take them over while it executes a run and raise them inside its steps."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

from evals_pipeline.defs.executor import live_steps, stopped_elsewhere
from evals_pipeline.process import kill_live_children, live_children
from evals_pipeline.stopping import request_stop, tally_at_stop, wait_for_stop

if TYPE_CHECKING:
    from evals_pipeline.models.case import ResolvedCase
    from evals_pipeline.progress_bars import ProgressDisplay
    from evals_pipeline.results import ResultStore

STOP_SECONDS = 3.0
"""How long the children running at a stop get to end (process.py gives them SIGTERM, then
SIGKILL after a second) before they are killed outright; a multiprocess run's step processes
get as long to end theirs, and a celery run's steps (defs/celery_app.py)."""
CANCEL_SECONDS = 1.0
"""How long marking the command's Dagster runs canceled may take once the children are gone
(it starts with the stop); past it they are marked failed by the next command
(instance/run_recovery.py)."""
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class _Planned:
    """A suite's planned agent runs, each trial of each case, and the store that keeps them."""

    cases: Sequence[ResolvedCase]
    store: ResultStore

    @property
    def runs(self) -> int:
        return sum(case.trials.count for case in self.cases)


_plans: list[_Planned] = []  # the suites begun so far
_display: ProgressDisplay | None = None
_started_ms = 0  # when the first suite began: a record stored since is this command's


def plan(cases: Sequence[ResolvedCase], store: ResultStore, display: ProgressDisplay) -> None:
    """A suite begins: the agent runs of `cases` join the tally, counted done at a stop from
    what `store` keeps (`kept_runs`), and `display` shows its progress."""
    global _display, _started_ms
    from evals_pipeline.process import now_ms

    _started_ms = _started_ms or now_ms()
    _plans.append(_Planned(cases, store))
    _display = display


def kept_runs(cases: Sequence[ResolvedCase], store: ResultStore, since_ms: int) -> int:
    """The trials of `cases` whose agent run `store` keeps under its unchanged key: stored since
    `since_ms` (by this command), or reused from before. Counted from the store, not from this
    process's tally: on the multiprocess or celery executor the runs end in other processes,
    and only what they stored tells."""
    from evals_pipeline.results import case_keys
    from evals_pipeline.results.keys import FileLookups

    files = FileLookups()  # cases name the same files: each hashed once
    kept = 0
    for case in cases:
        keys = case_keys(case, files=files)
        for trial in range(case.trials.count):
            key = keys.run(trial)
            ok = store.run(case.case_key, case.agent, key)  # reusable: without error
            if ok is not None and case.cache:
                kept += 1  # reused, or run now
                continue
            # An errored run (store.run leaves it out) or one of a case without cache is this
            # command's when its record, or its session's, was stored since it began.
            record = ok or store.session(case.case_key, case.agent, key)
            stored = record.reused if record is not None else None
            kept += stored is not None and stored.stored_ms >= since_ms
    return kept


def run_stoppable(work: Callable[[], int]) -> int:
    """`work()` (the command) on a thread, stopped by the first SIGINT or SIGTERM, ended at once
    by a second; its exit code. Off the main thread (no signal reaches it), `work()` as is."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    received: list[int] = []
    outcome: list[int] = []
    failure: list[BaseException] = []

    def handle(signum: int, _: FrameType | None) -> None:
        received.append(signum)
        if not request_stop():  # the second signal: nothing waits any longer
            kill_live_children()
            _leave(128 + signum)

    def command() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # re-raised on the main thread
            failure.append(exc)

    previous = {sig: signal.signal(sig, handle) for sig in _SIGNALS}
    thread = threading.Thread(target=command, name="evals-pipeline-run", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            if wait_for_stop(0.1) and received:
                _stop(received[0])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failure:
        raise failure[0]
    return outcome[0]


def _stop(signum: int) -> None:
    """End the command stopped by `signum`: its output silenced, its children ended, its Dagster
    runs marked canceled, one line, exit 128 + `signum`."""
    terminal = _silence_output()
    canceling = _cancel_runs()  # beside the children's grace: opening the instance takes time
    deadline = time.monotonic() + STOP_SECONDS
    # A multiprocess run's step processes, interrupted (defs/executor.py), end their own; a
    # celery run's steps end theirs once they see the run canceled (defs/celery_app.py).
    while (live_children() or live_steps()) and time.monotonic() < deadline:
        time.sleep(0.05)
    kill_live_children()
    if canceling is not None:
        canceling.join(max(CANCEL_SECONDS, deadline - time.monotonic()))
    line = _summary()
    with contextlib.suppress(OSError):
        os.write(terminal, line.encode())
    _leave(128 + signum)


def _summary() -> str:
    """The closing line: the planned agent runs kept (done), cut short (stopped: in flight in
    this process, or a celery step's, at the stop and not kept), and the rest (not started)."""
    planned = sum(p.runs for p in _plans)
    done = 0
    with contextlib.suppress(Exception):  # an unreadable store: nothing counts as kept
        done = sum(kept_runs(p.cases, p.store, _started_ms) for p in _plans)
    stopped = min(tally_at_stop().stopped + stopped_elsewhere(), planned - done)
    not_started = max(0, planned - done - stopped)
    return (
        f"interrupted: {done} done, {stopped} stopped, {not_started} not started; "
        "run the same command to resume\n"
    )


def _silence_output() -> int:
    """Point stdout and stderr at /dev/null, so what the stopped command still prints (its
    runs' errors) never shows; a descriptor of the former stderr, for the closing line."""
    if _display is not None:
        with contextlib.suppress(Exception):  # bars on a terminal: its cursor back
            _display.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    terminal = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    return terminal


def _cancel_runs() -> threading.Thread | None:
    """Start marking the Dagster runs this process runs canceled; the thread doing it, which
    the caller waits for at most until the children are gone plus CANCEL_SECONDS."""
    if "dagster" not in sys.modules:
        return None  # stopped before Dagster loaded: no run was made

    def cancel() -> None:
        from evals_pipeline.cli.locations import cli_instance
        from evals_pipeline.instance.run_recovery import cancel_own_runs

        with contextlib.suppress(Exception):
            cancel_own_runs(cli_instance())

    thread = threading.Thread(target=cancel, name="cancel-runs", daemon=True)
    thread.start()
    return thread


def _leave(code: int) -> None:
    """Exit now: no thread is waited for, no clean-up runs that could hang or print."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
