"""The process-wide stop: once a run is interrupted (Ctrl-C, SIGTERM, a run terminated in the
Dagster UI), no agent or grader starts and those running end (process.py checks the flag), and
the agent runs done and in flight at that moment are counted for the one line that says so."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_stop = threading.Event()
_lock = threading.Lock()
_done = 0
_in_flight: set[Hashable] = set()
_at_stop: StopTally | None = None


@dataclass(frozen=True)
class StopTally:
    """The agent runs at the moment the run was stopped: ended (`done`) and running (`stopped`)."""

    done: int
    stopped: int


def request_stop() -> bool:
    """Stop launching and end what runs; whether this call was the first to ask."""
    global _at_stop
    with _lock:
        first = not _stop.is_set()
        if first:
            _at_stop = StopTally(_done, len(_in_flight))
            _stop.set()
    return first


def reset_stop() -> None:
    """Forget the stop and the tally: a process that serves one run after another (a celery
    worker's pool process) begins each run's step unstopped, whatever stopped the last."""
    global _at_stop, _done
    with _lock:
        _stop.clear()
        _at_stop = None
        _done = 0
        _in_flight.clear()


@contextmanager
def stop_when_interrupted() -> Iterator[None]:
    """Work whose thread may be interrupted rather than failed (KeyboardInterrupt; in a Dagster
    step, the interrupt Dagster raises when its run is terminated): an interrupt stops the run,
    so no agent or grader starts and those running end, then goes on up."""
    try:
        yield
    except (Exception, GeneratorExit):  # failed, or a generator closed early: not interrupted
        raise
    except BaseException:
        request_stop()
        raise


def stopping() -> bool:
    """Whether the run was stopped: nothing new may start."""
    return _stop.is_set()


def wait_for_stop(timeout: float) -> bool:
    """Wait up to `timeout` seconds for a stop; whether one came."""
    return _stop.wait(timeout)


def tally_at_stop() -> StopTally:
    """The agent runs done and in flight when the stop came (now, if none came)."""
    with _lock:
        return _at_stop or StopTally(_done, len(_in_flight))


def agent_started(run: Hashable) -> None:
    """Agent run `run` (any key naming it) started its agent."""
    with _lock:
        _in_flight.add(run)


def agent_ended(run: Hashable) -> None:
    """Agent run `run` ended: ran, reused or refused. Only an end before the stop counts as done;
    one after it was stopped (or never started)."""
    global _done
    with _lock:
        _in_flight.discard(run)
        if not _stop.is_set():
            _done += 1
