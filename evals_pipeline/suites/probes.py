"""The facts of the file system a suite was loaded or its cases resolved from: which files and
folders exist where they were looked for, the text of the files read, the working folder, the
home folder and the environment. Recorded while a suite loads (loader.py) or resolves
(resolution.py), they tell later whether doing it again would give the same: only while every
one of them still holds.

Each probe is a call of a pure function of its arguments and the file system (`probed`), so
checking it is calling it again; a call that raised holds while it raises the same.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import shutil
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
    """One call and what it returned, or the error it raised (its type and message)."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    result: Any
    raised: tuple[type[Exception], str] | None = None

    def holds(self) -> bool:
        try:
            result = self.function(*self.args, **dict(self.kwargs))
        except Exception as exc:  # any error the call raised when recorded, compared below
            return self.raised == _error(exc)
        return self.raised is None and bool(result == self.result)


def _error(exc: Exception) -> tuple[type[Exception], str]:
    return type(exc), str(exc)


def probed(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, its calls recorded while a `recording()` block is open (in this context)."""

    @functools.wraps(function)
    def recorded(*args: P.args, **kwargs: P.kwargs) -> R:
        log = _recording.get()
        if log is None:
            return function(*args, **kwargs)
        call = (recorded, tuple(args), tuple(sorted(kwargs.items())))
        try:
            result = function(*args, **kwargs)
        except Exception as exc:  # a missing or unreadable file is a fact too
            log[Probe(*call, None, _error(exc))] = None
            raise
        log[Probe(*call, result)] = None
        return result

    return recorded


@dataclass(frozen=True)
class Probes:
    """The distinct probes of one load or resolution."""

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
def is_dir(path: Path) -> bool:
    return path.is_dir()


@probed
def exists(path: Path) -> bool:
    return path.exists()


@probed
def folder_names(path: Path) -> tuple[str, ...]:
    """The names in a folder, sorted."""
    return tuple(sorted(os.listdir(path)))


@probed
def glob_matches(pattern: str) -> tuple[str, ...]:
    """The paths `pattern` matches (`**` spans folders), sorted."""
    return tuple(sorted(glob.glob(pattern, recursive=True)))


@probed
def which(command: str, path: str | None = None) -> str | None:
    """Where `command` is found on `path` (default: this process's PATH), or None."""
    return shutil.which(command, path=path)


@probed
def is_executable(path: Path) -> bool:
    """Whether `path` is a file this process may run (its run bit set for us)."""
    return path.is_file() and os.access(path, os.X_OK)


@probed
def environment() -> str:
    """A digest of the process environment: a suite's `${{ VAR }}` read it (a digest, so no
    secret is kept)."""
    digest = hashlib.sha256()
    for key, value in sorted(os.environ.items()):
        digest.update(f"{key}\0{value}\0".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@probed
def resolved(path: Path) -> Path:
    return path.resolve()


@probed
def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


@probed
def read_utf8(path: Path) -> str:
    """A file's text, strictly UTF-8 (an undecodable byte raises)."""
    return path.read_text(encoding="utf-8")
