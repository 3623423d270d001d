"""Linux prctl(2) through ctypes: the runner as a child subreaper, and children that get SIGKILL
when the runner dies. Elsewhere (macOS, no libc) both are no-ops and the sweep on start is what
is left."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.prctl
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


def die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """A Popen `preexec_fn` giving the child SIGKILL when its parent dies, or None where the
    kernel cannot do that. It exits at once when the parent already died before it ran."""
    prctl = _PRCTL
    if prctl is None:
        return None

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec
