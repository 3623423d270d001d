"""Who started a child: the environment markers every child carries, and the runner identity
(host, pid, start time) that tells a live runner from a dead one whose pid was reused.

The markers are opaque random values: no child learns the runner's pid from its environment.
Only the runner's ledger (ledger.py) maps a runner's marker to its identity."""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass

from evals_pipeline.reaping.proc_table import read_stat

# Set on every child; inherited by everything it starts, setsid or not.
TOKEN_VAR = "EVALS_PIPELINE_PROC"  # one value per process started: finds that child's tree
OWNER_VAR = "EVALS_PIPELINE_OWNER"  # one value per runner: finds what a dead runner left


@dataclass(frozen=True)
class Owner:
    """A runner process: host, pid and start time (clock ticks since boot, from /proc)."""

    host: str
    pid: int
    start_ticks: int

    @property
    def identity(self) -> str:
        """`host:pid:start_ticks`, for the runner's own guard; never put in a child's env."""
        return f"{self.host}:{self.pid}:{self.start_ticks}"

    @classmethod
    def parse(cls, identity: str) -> Owner | None:
        host, _, rest = identity.rpartition(":")
        host, _, pid = host.rpartition(":")
        try:
            return cls(host, int(pid), int(rest))
        except ValueError:
            return None

    def alive(self) -> bool:
        """Whether this runner still runs: the pid exists with the same start time. Runners on
        other hosts are taken as alive, since we cannot tell."""
        if self.host != socket.gethostname():
            return True
        stat = read_stat(self.pid)
        if stat is None:
            # No /proc (not Linux): the pid alone has to do.
            return self.start_ticks == 0 and _pid_exists(self.pid)
        return stat.running and stat.start_ticks == self.start_ticks


_runner: Owner | None = None
_marker: tuple[int, str] | None = None  # (pid, marker): a forked child makes its own


def this_runner() -> Owner:
    """The identity of the running process: read once (every child started asks), and again
    in a forked child, whose pid differs."""
    global _runner
    pid = os.getpid()
    if _runner is None or _runner.pid != pid:
        stat = read_stat(pid)
        _runner = Owner(socket.gethostname(), pid, stat.start_ticks if stat else 0)
    return _runner


def runner_marker() -> str:
    """This runner's value of OWNER_VAR: random, made once per process."""
    global _marker
    pid = os.getpid()
    if _marker is None or _marker[0] != pid:
        _marker = (pid, secrets.token_hex(16))
    return _marker[1]


def new_token() -> str:
    """A value of TOKEN_VAR no other child has (random: it names no pid)."""
    return secrets.token_hex(16)


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
