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
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from evals_pipeline.defs.executor import live_step_processes
from evals_pipeline.process import kill_live_children, live_children
from evals_pipeline.stopping import request_stop, tally_at_stop, wait_for_stop

if TYPE_CHECKING:
    from evals_pipeline.progress_bars import ProgressDisplay

STOP_SECONDS = 3.0
"""How long the children running at a stop get to end (process.py gives them SIGTERM, then
SIGKILL after a second) before they are killed outright; a multiprocess run's step processes
get as long to end theirs."""
CANCEL_SECONDS = 1.0
"""How long marking the command's Dagster runs canceled may take once the children are gone
(it starts with the stop); past it they are marked failed by the next command
(instance/run_recovery.py)."""
_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_planned = 0  # agent runs of the suites begun so far
_display: ProgressDisplay | None = None


def plan(runs: int, display: ProgressDisplay) -> None:
    """A suite begins: its `runs` agent runs join the tally, and `display` shows its progress."""
    global _planned, _display
    _planned += runs
    _display = display


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
    # A multiprocess run's step processes, interrupted (defs/executor.py), end their own.
    while (live_children() or live_step_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    kill_live_children()
    if canceling is not None:
        canceling.join(max(CANCEL_SECONDS, deadline - time.monotonic()))
    tally = tally_at_stop()
    not_started = max(0, _planned - tally.done - tally.stopped)
    line = (
        f"interrupted: {tally.done} done, {tally.stopped} stopped, {not_started} not started; "
        "run the same command to resume\n"
    )
    with contextlib.suppress(OSError):
        os.write(terminal, line.encode())
    _leave(128 + signum)


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
