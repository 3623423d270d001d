"""What one step makes ahead for a later step of the same Dagster run, found in this process by
that step's folder: sessions (enrichers/ahead.py) and grades (grading/ahead.py)."""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=Closable)


class MadeAhead(Generic[T]):
    """What is being made ahead, by the folder of the step it is made for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path, T] = {}
        _registries.add(self)

    def start(self, folder: Path, made: T) -> T:
        """`made` for the step whose folder is `folder`; what an earlier step of the same run
        made for it is closed (that step's runs are new)."""
        with self._lock:
            earlier = self._open.pop(folder, None)
            self._open[folder] = made
        if earlier is not None:
            earlier.close()
        return made

    def claim(self, folder: Path) -> T | None:
        """What was made for the step whose folder is `folder`, if this process made any; the
        caller closes it."""
        with self._lock:
            return self._open.pop(folder, None)

    def close_all(self) -> None:
        """Close everything not claimed."""
        with self._lock:
            left = list(self._open.values())
            self._open.clear()
        for made in left:
            made.close()


_registries: weakref.WeakSet[MadeAhead[Any]] = weakref.WeakSet()


def close_unclaimed() -> None:
    """Close what was made ahead for steps that did not run once a run is over (a step before
    them failed): its queued work is dropped, not done before this process may end."""
    for registry in _registries:
        registry.close_all()
