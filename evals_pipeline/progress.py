"""Progress of a layer's work as typed events: the layers emit them, Dagster logs them as lines
carrying the event (`logging_progress`, at most one every few seconds), and `evals-pipeline run`
hears every one (`listening`) and draws them as progress bars on a terminal (progress_bars.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from pydantic import BaseModel, ConfigDict, Field

PROGRESS_RECORD_ATTR = "evals_progress"
"""The log record attribute (logging's `extra`) that carries the event as a dict."""

LOG_EVERY_SECONDS = 5.0
"""How often a layer's progress reaches the log at most, besides its start and end: each line is
a write to Dagster's event log, which would otherwise cost more than a quick case itself."""


class ProgressEvent(BaseModel):
    """One item of a layer done: which, how it ended, and the layer's tally so far; `done` 0
    (no item) when the layer starts.

    `counts` are the outcomes so far in the layer's own terms, e.g. {ok, error} for agent runs,
    {pass, fail, error} for grades; they add up to `done`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    layer: str = Field(description="What is being done: agent runs, grades, judgments, ...")
    done: int = Field(ge=0)
    total: int = Field(ge=0)
    item: str = Field(default="", description="The item done, e.g. `claude / fizzbuzz (trial 1)`.")
    outcome: str = Field(default="", description="How it ended, e.g. `pass (score 1.00)`.")
    counts: dict[str, int] = Field(default_factory=dict)
    elapsed_ms: int = Field(default=0, ge=0, description="Since the layer's first item started.")

    def line(self) -> str:
        """The plain progress line (what Dagster logs, and the terminal shows without a TTY)."""
        if not self.done:
            return f"{self.layer}: {self.total} to do"
        return f"[{self.done}/{self.total}] {self.item}: {self.outcome}"

    def tally(self) -> str:
        """The counts as `ok 3, error 1`."""
        return ", ".join(f"{name} {n}" for name, n in self.counts.items())

    @property
    def finished(self) -> bool:
        return self.done >= self.total


Progress = Callable[[ProgressEvent], None]


def silent(_: ProgressEvent) -> None:
    """A Progress that reports nothing (the layers' default)."""


_listeners: list[Progress] = []
_listeners_lock = threading.Lock()


@contextmanager
def listening(progress: Progress) -> Iterator[None]:
    """Hand every event any layer of this process emits to `progress` while in the block: how
    `evals-pipeline run` hears each item of an in-process run, not only the logged ones."""
    with _listeners_lock:
        _listeners.append(progress)
    try:
        yield
    finally:
        with _listeners_lock:
            _listeners.remove(progress)


def hand_to_listeners(event: ProgressEvent) -> None:
    """Hand `event` to this process's listeners: a layer's here, or one relayed from a step
    process (progress_relay.py)."""
    for listener in list(_listeners):
        listener(event)


def logging_progress(log: logging.Logger, every_seconds: float = LOG_EVERY_SECONDS) -> Progress:
    """A Progress that hands each event to this process's listeners, and logs its line at INFO
    with the event attached to the record (Dagster's `context.log` keeps the line; a logger of
    the run gets the event back): the start, the end, and at most one in `every_seconds`."""
    last_logged = -every_seconds

    def emit(event: ProgressEvent) -> None:
        nonlocal last_logged
        hand_to_listeners(event)
        now = time.monotonic()
        if event.done and not event.finished and now - last_logged < every_seconds:
            return
        last_logged = now
        log.info(event.line(), extra={PROGRESS_RECORD_ATTR: event.model_dump()})

    return emit


def record_event(record: logging.LogRecord) -> ProgressEvent | None:
    """The event a log record carries, if it is a progress line."""
    data = getattr(record, PROGRESS_RECORD_ATTR, None)
    return ProgressEvent.model_validate(data) if isinstance(data, dict) else None


class LayerProgress:
    """Counts a layer's finished items across its worker threads and emits one event each.

    `outcomes` names the counts shown from the start (at 0), in order; others are added as seen.
    The layer's start (done 0) is emitted at once; events are emitted under the lock, so `done`
    only grows from one event to the next.
    """

    def __init__(
        self,
        layer: str,
        total: int,
        progress: Progress,
        outcomes: Sequence[str] = (),
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.layer = layer
        self.total = total
        self._progress = progress
        self._counts = dict.fromkeys(outcomes, 0)
        self._done = 0
        self._clock = clock or time.monotonic
        self._start = self._clock()
        self._lock = threading.Lock()
        self._emit(item="", outcome="")

    def advance(self, item: str, outcome: str, count_as: str) -> None:
        """One item finished: `outcome` describes it, `count_as` is the count it adds to."""
        with self._lock:
            self._done += 1
            self._counts[count_as] = self._counts.get(count_as, 0) + 1
            self._emit(item, outcome)

    def _emit(self, item: str, outcome: str) -> None:
        self._progress(
            ProgressEvent(
                layer=self.layer,
                done=self._done,
                total=self.total,
                item=item,
                outcome=outcome,
                counts=dict(self._counts),
                elapsed_ms=int((self._clock() - self._start) * 1000),
            )
        )
