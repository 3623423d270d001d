"""The facts of the file system a suite's cases were resolved from: which files and folders
exist where they were looked for, the text of the input files read, the working folder and the
home folder. Recorded while a suite resolves, they tell later whether resolving the same loaded
suite again would give the same cases: only while every one of them still holds.

Each probe is a call of a pure function of its arguments and the file system (`probed`), so
checking it is calling it again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_recording: ContextVar[dict[Probe, None] | None] = ContextVar("suite_probes", default=None)


@dataclass(frozen=True)
class Probe:
    """One call and what it returned."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    result: Any

    def holds(self) -> bool:
        try:
            return bool(self.function(*self.args, **dict(self.kwargs)) == self.result)
        except OSError:
            return False


def probed(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, its calls recorded while a `recording()` block is open (in this context)."""

    @functools.wraps(function)
    def recorded(*args: P.args, **kwargs: P.kwargs) -> R:
        result = function(*args, **kwargs)
        log = _recording.get()
        if log is not None:
            log[Probe(function, tuple(args), tuple(sorted(kwargs.items())), result)] = None
        return result

    return recorded


@dataclass(frozen=True)
class Probes:
    """The distinct probes of one resolution."""

    probes: tuple[Probe, ...]

    def hold(self) -> bool:
        """Whether the file system still answers every probe as it did."""
        return all(probe.holds() for probe in self.probes)


@contextmanager
def recording() -> Iterator[list[Probes]]:
    """Record the probes made in the block; the list holds them once it ends (the working and
    home folders always among them: relative and `~` paths resolve against them)."""
    log: dict[Probe, None] = {}
    token = _recording.set(log)
    done: list[Probes] = []
    try:
        working_folder()
        home_folder()
        yield done
    finally:
        _recording.reset(token)
    done.append(Probes(tuple(log)))


@probed
def working_folder() -> str:
    return os.getcwd()


@probed
def home_folder() -> str:
    return os.path.expanduser("~")


@probed
def is_file(path: Path) -> bool:
    return path.is_file()


@probed
def exists(path: Path) -> bool:
    return path.exists()


@probed
def resolved(path: Path) -> Path:
    return path.resolve()


@probed
def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")
