"""Linux prctl(2) through ctypes: the runner as a child subreaper, non-dumpable, and children
that get SIGKILL when the runner dies. Elsewhere (macOS, no libc) all are no-ops and the sweep on
start is what is left."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols hold libc's: no `ldconfig -p` child at import, as
        # ctypes.util.find_library would run in every process that imports this.
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    function.restype = ctypes.c_int
    prctl: Callable[..., int] = function
    return prctl


# Resolved once at import: the pre-exec hook below must not load libraries in a forked child.
_PRCTL = _load_prctl()
_subreaper_lock = threading.Lock()
_subreaper_pid: int | None = None


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once per process).

    A grandchild that escapes with setsid is then re-parented to us, not to init, so we can
    still find it in our process tree and reap it once killed. False where unsupported.
    """
    global _subreaper_pid
    if _PRCTL is None:
        return False
    with _subreaper_lock:
        if _subreaper_pid != os.getpid():  # a forked child does not inherit the flag
            if _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                return False
            _subreaper_pid = os.getpid()
    return True


def become_undumpable() -> bool:
    """Make this process non-dumpable: its /proc entries (environ, mem) become root's, so a
    child running as the same user outside the sandbox cannot read the keys in its environment
    or memory, nor ptrace it. Children get their own flag back when they exec. False where
    unsupported."""
    if _PRCTL is None:
        return False
    if _PRCTL(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0:
        return True
    return _PRCTL(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def is_dumpable() -> bool | None:
    """Whether this process is dumpable; None where unknown."""
    return None if _PRCTL is None else _PRCTL(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0


def die_with_parent(
    parent_pid: int, signum: signal.Signals = signal.SIGKILL
) -> Callable[[], None] | None:
    """A Popen `preexec_fn` giving the child `signum` when its parent dies, or None where the
    kernel cannot do that. It exits at once when the parent already died before it ran."""
    prctl = _PRCTL
    if prctl is None:
        return None

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


def die_with_parent_process(parent_pid: int) -> bool:
    """Give this process SIGKILL when its parent dies (a step process whose command may be
    killed outright); False where the kernel cannot do that. Exits at once when the parent
    died before the call."""
    if _PRCTL is None:
        return False
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)
    return True


# util-linux's setpriv sets the parent-death signal and execs the command. Through it Python can
# vfork: a pre-exec hook forces a full fork of the runner, about 20 ms per child once Dagster and
# pandas are loaded, against 2 ms.
_SETPRIV = shutil.which("setpriv") if _PRCTL is not None else None


@dataclass(frozen=True)
class Launch:
    """How to start a child that gets SIGKILL when this process dies: the argv to Popen, and
    the pre-exec hook it still needs (None through setpriv)."""

    argv: list[str]
    preexec_fn: Callable[[], None] | None


def dying_with_parent(
    command: str | list[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    signum: signal.Signals = signal.SIGKILL,
) -> Launch:
    """The launch of `command` (argv, or a string for /bin/sh) that gets `signum` when this
    process dies (SIGKILL: it dies with it; SIGTERM: it stops its own children first).

    Through setpriv a missing program would surface as setpriv's exit 127; it is looked up
    first, so it stays an OSError from here, as Popen would raise it."""
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    if _SETPRIV is None:
        return Launch(argv, die_with_parent(os.getpid(), signum))
    check_executable(argv[0], cwd, env)
    return Launch([_SETPRIV, "--pdeathsig", signum.name.removeprefix("SIG"), "--", *argv], None)


def check_executable(program: str, cwd: str | Path, env: Mapping[str, str]) -> None:
    """Raise the OSError Popen would for a program that cannot be executed."""
    if "/" in program:
        path = Path(cwd, program)
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
