"""Python's cyclic garbage collector held off while a large structure is built.

Building the parse of a 10,000-test suite, its resolved cases or a report allocates hundreds of
thousands of objects that all stay alive; each allocation burst makes the collector walk every
live object again, for nothing. Parsing such a suite takes 6.6 s with it on, 1.7 s without.
A command's start-up (importing Dagster and our modules) is such a build too, and so is a
process's end: the interpreter's last collections walk every object left (freeze_at_exit).
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_enabled = False
_promote = False  # a block of the current pause asked for `kept`
_start_up_held = False  # start_up_paused() holds the collector off
_exit_frozen = False  # freeze_at_exit() has registered its hook
_for_life = False  # built_for_life() froze what the process keeps: nothing is thawed again


@contextmanager
def gc_paused(*, kept: bool = False) -> Iterator[None]:
    """No automatic collection in the block (nor in other threads meanwhile: the collector is
    process-wide); the state before the outermost block comes back after it, and the cycles
    made meanwhile are collected later as usual.

    `kept`: what the block builds stays alive after it (a suite's parse, its cases, a step's
    records), so it goes straight to the oldest generation. Left in the youngest, the first
    allocation after the block would walk every one of them (0.8 s for a 10,000-test suite)
    to find them all alive; the oldest is walked only by the rare full collections. A block
    whose objects die with it (a transcript encoded and written) leaves them where they are,
    so any garbage cycles among them are still found soon."""
    _hold(kept=kept)
    try:
        yield
    finally:
        _release()


@contextmanager
def start_up_paused() -> Iterator[None]:
    """No automatic collection through a command's start-up, until `start_up_over()` (or the
    block's end). Importing Dagster and our modules makes ~300,000 objects that live as long as
    the process; the collector walks them again at every threshold, ~0.4 s of a 2.5 s import."""
    global _start_up_held
    _hold(kept=False)
    _start_up_held = True
    try:
        yield
    finally:
        _end_start_up(freeze=False)


def start_up_over() -> None:
    """The command's real work begins: what start-up made is frozen (moved out of the
    collector's sight without walking it; a few thousand garbage objects among them stay) and
    collection resumes. A no-op outside `start_up_paused()` or once called."""
    _end_start_up(freeze=True)


@contextmanager
def built_for_life() -> Iterator[None]:
    """No automatic collection while the block builds what the process keeps until it exits (a
    code location's definitions); then every object alive is frozen for good, so no later
    collection (a sensor's tick, the imports of the Dagster instance's storage) walks it again.
    In a code server of a 10,000-case suite one full collection walking it took ~0.7 s.

    What `kept` blocks build afterwards is frozen too, rather than thawed with the rest: it is
    still freed once unreferenced; only cycles among it are never looked for."""
    global _for_life
    _hold(kept=False)
    try:
        yield
    finally:
        with _lock:
            _for_life = True
            gc.freeze()
        _release()


def _end_start_up(*, freeze: bool) -> None:
    global _start_up_held
    with _lock:
        if not _start_up_held:
            return
        _start_up_held = False
        if freeze:
            gc.freeze()
    _release()


def _hold(*, kept: bool) -> None:
    global _holders, _was_enabled, _promote
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
        _promote = _promote or kept


def _release() -> None:
    global _holders, _promote
    with _lock:
        _holders -= 1
        if _holders == 0:
            if _promote:
                _promote_all()
            _promote = False
            if _was_enabled:
                gc.enable()


def _promote_all() -> None:
    """Every tracked object into the oldest generation (frozen, then thawed there; start-up's
    frozen objects are thawed there too, where only the rare full collections walk them), or
    left frozen once the process keeps its build for life."""
    gc.freeze()
    if not _for_life:
        gc.unfreeze()


def freeze_at_exit() -> None:
    """At this process's exit, once the other exit hooks have run, freeze every object: the
    interpreter's final full collections then walk nothing. With a run's or a 10,000-case
    suite's objects alive that walk took ~1.4 s of every command's exit, to free memory the
    operating system takes back anyway. Objects are still released (module teardown drops
    them, their finalizers run); only garbage cycles left at exit are not looked for. Hooks
    run last-registered first: register early, so this one runs after the rest."""
    global _exit_frozen
    with _lock:
        if _exit_frozen:
            return
        _exit_frozen = True
    atexit.register(gc.freeze)
