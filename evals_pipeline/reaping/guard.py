"""A guard process per runner: it waits for the runner to end, however it ends (SIGKILL
included), then kills what the runner's children left running. Parent-death signals reach
only direct children; the guard reaches grandchildren and setsid escapees at once, where the
sweep on the next start would reach them only then.

The runner holds the write end of a pipe whose read end is the guard's stdin; the kernel
closes it when the runner dies, so the guard wakes with no polling.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from evals_pipeline.reaping.owner import Owner
from evals_pipeline.reaping.proc_table import read_stat

_lock = threading.Lock()
_guarded_pid: int | None = None
_pipe_end: int | None = None  # kept open for the runner's lifetime, on purpose
WAIT_FOR_EXIT_SECONDS = 5.0


def ensure_guard(owner: Owner) -> None:
    """Start this runner's guard unless it runs already (once per process; no-op without
    /proc, where the sweep on start is what is left)."""
    global _guarded_pid, _pipe_end
    if _guarded_pid == owner.pid:  # every call but the first: no read of /proc per child
        return
    if read_stat(owner.pid) is None:
        return
    with _lock:
        if _guarded_pid == owner.pid:
            return
        read_end, write_end = os.pipe()  # not inheritable: our other children never hold it
        try:
            subprocess.Popen(
                [sys.executable, "-m", "evals_pipeline.reaping.guard", owner.identity],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=_guard_env(),
                start_new_session=True,  # a Ctrl-C to the runner's group must not kill it first
            )
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        _guarded_pid, _pipe_end = owner.pid, write_end


# Enough to find the state folder, none of the runner's secrets.
_GUARD_ENV = ("PATH", "HOME", "LANG", "XDG_STATE_HOME", "EVALS_PIPELINE_STATE_DIR")


def _guard_env() -> dict[str, str]:
    """The guard's environment: `_GUARD_ENV`, and a PYTHONPATH that finds this very package
    even when the runner imported it from a checkout that is not installed."""
    env = {k: v for k, v in os.environ.items() if k in _GUARD_ENV}
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(
        [package_parent, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return env


def main(identity: str) -> None:
    """Wait for the runner named by `identity` to end, then sweep what it left."""
    from evals_pipeline.reaping.ledger import sweep_leftovers

    owner = Owner.parse(identity)
    sys.stdin.buffer.read()  # returns at EOF: the runner closed the pipe or died
    deadline = time.monotonic() + WAIT_FOR_EXIT_SECONDS
    while owner is not None and owner.alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # the pipe closes a moment before the runner is gone from /proc
    sweep_leftovers()


if __name__ == "__main__":
    main(sys.argv[1])
