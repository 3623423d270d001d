"""Showing progress events on the terminal: rich progress bars (one per layer: done/total, the
outcomes so far, elapsed and ETA) when stderr is a terminal, plain lines otherwise (CI logs,
pipes), so logs stay greppable and a terminal stays readable."""

from __future__ import annotations

import os
import sys
from typing import Protocol, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from evals_pipeline.progress import ProgressEvent
from evals_pipeline.terminal_text import for_terminal


class ProgressDisplay(Protocol):
    """Where `evals-pipeline run` shows the layers' progress and its other messages."""

    def event(self, event: ProgressEvent) -> None: ...

    def message(self, text: str) -> None: ...

    def close(self) -> None: ...


class PlainProgress:
    """One line per event, as Dagster logs it, and the layer's tally when it is done."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    @property
    def stream(self) -> TextIO:
        # Looked up at each write, so a redirected sys.stderr (pytest's capsys) is honoured.
        return self._stream or sys.stderr

    def event(self, event: ProgressEvent) -> None:
        if not event.total:
            return  # nothing to do: no line
        lines = [event.line()]
        if event.done and event.finished:
            lines.append(
                f"{event.layer}: {event.done}/{event.total} done ({event.tally()}) in "
                f"{event.elapsed_ms / 1000:.1f} s"
            )
        self.stream.write("".join(f"{for_terminal(line)}\n" for line in lines))
        self.stream.flush()

    def message(self, text: str) -> None:
        self.stream.write(f"{for_terminal(text)}\n")
        self.stream.flush()

    def close(self) -> None:
        pass


class ProgressBars:
    """rich bars, one per layer run; other messages print above them."""

    def __init__(self, console: Console, owned: TextIO | None = None) -> None:
        self._owned = owned  # a stream this display opened, closed with it
        self._progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._progress.start()

    def event(self, event: ProgressEvent) -> None:
        if not event.total:
            return  # nothing to do: no bar
        task = self._tasks.get(event.layer)
        if task is None or event.done == 0:
            # A layer's first event (done 0) starts its bar; the same layer run again (the next
            # group of agents) gets a bar of its own.
            task = self._progress.add_task(event.layer, total=event.total, tally=event.tally())
            self._tasks[event.layer] = task
        self._progress.update(
            task, completed=event.done, total=event.total, tally=event.tally(), refresh=True
        )
        if event.finished:
            self._progress.stop_task(task)

    def message(self, text: str) -> None:
        self._progress.console.print(for_terminal(text), markup=False, highlight=False)

    def close(self) -> None:
        self._progress.stop()
        if self._owned is not None:
            self._owned.close()


def progress_display(stream: TextIO | None = None) -> ProgressDisplay:
    """Bars on `stream` (default stderr) when it is a terminal, else plain lines.

    The bars draw on a duplicate of the terminal's descriptor: while a step runs, Dagster's
    compute log capture points stderr at a file (mirrored back a second later), where rich
    would see no terminal and draw nothing.
    """
    target = stream or sys.stderr
    if not target.isatty():
        return PlainProgress(stream)
    terminal = open(os.dup(target.fileno()), "w", encoding="utf-8", closefd=True)  # noqa: SIM115
    return ProgressBars(Console(file=terminal), owned=terminal)
