"""One child's process tree: found by the parent tree while its leader lives, by the leader's
session and group, and by the token in the environment (setsid escapees included), signalled,
and reaped when it was re-parented to us."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from evals_pipeline.reaping.owner import TOKEN_VAR
from evals_pipeline.reaping.proc_table import (
    NewerStats,
    ProcessStat,
    descendants,
    environ_has,
    read_stat,
)

EXIT_WAIT_SECONDS = 2.0


def send_signal(stat: ProcessStat, sig: int) -> None:
    """Signal the process `stat` describes, never another that took its pid since.

    A pidfd pins the process; its start time, read after pinning, proves it is the same one.
    """
    try:
        fd = os.pidfd_open(stat.pid)
    except (AttributeError, OSError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(stat.pid, sig)
        return
    try:
        now = read_stat(stat.pid)
        if now is not None and now.start_ticks == stat.start_ticks:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(fd, sig)
    finally:
        os.close(fd)


class ChildTree:
    """Everything below one child that `run_process` started (the leader itself is Popen's)."""

    def __init__(self, leader: int, token: str) -> None:
        self.leader = leader
        self.entry = f"{TOKEN_VAR}={token}".encode()
        leader_stat = read_stat(leader)
        self.since_ticks = leader_stat.start_ticks if leader_stat else 0
        self.seen: dict[int, int] = {}  # pid -> start ticks of every member met so far
        # Every member started after the leader: only their pids need reading.
        self.newer = NewerStats(leader)

    def members(self, *, leader_alive: bool) -> list[ProcessStat]:
        """The tree's processes now, zombies included. The parent tree is only followed while
        the leader is unreaped: after that its pid may belong to someone else."""
        stats = self.newer.now()
        below = descendants(self.leader, stats) if leader_alive else set()
        found = []
        for stat in stats:
            if stat.pid == self.leader or stat.start_ticks < self.since_ticks:
                continue  # older than the leader: cannot be ours
            if (
                stat.pid in below
                # The leader's session or group: its pid cannot name another while one is left.
                or stat.sid == self.leader
                or stat.pgid == self.leader
                or self.seen.get(stat.pid) == stat.start_ticks
                or environ_has(stat.pid, self.entry)
            ):
                found.append(stat)
                self.seen[stat.pid] = stat.start_ticks
        return found

    def signal(
        self, sig: int, *, leader_alive: bool, group: bool | None = None
    ) -> list[ProcessStat]:
        """Send `sig` to every member and (by default only while the leader is unreaped, when
        its pid cannot name another group) to the leader's process group; returns the members
        there were, zombies included."""
        if leader_alive if group is None else group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.leader, sig)
        members = self.members(leader_alive=leader_alive)
        for stat in members:
            if stat.running:
                send_signal(stat, sig)
        return members

    def settled(self, members: list[ProcessStat]) -> bool:
        """Whether `members`, met once the leader was reaped, were only exited children of ours
        (the sandbox's init, re-parented to us as its subreaper): reaped now, as nothing that
        runs is left to start another, the tree is gone without another look at /proc."""
        me = os.getpid()
        if any(stat.running or stat.ppid != me for stat in members):
            return False
        for stat in members:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(stat.pid, os.WNOHANG)
        return True

    def reap(self) -> None:
        """Collect the exit status of members re-parented to us (we are their subreaper), so
        they do not stay zombies of the runner: those met alive, and any in the leader's session
        (no other process can be in it: its id stays taken while one is)."""
        me = os.getpid()
        for stat in self.newer.now():
            if stat.ppid != me or stat.running or stat.pid == self.leader:
                continue
            if stat.sid == self.leader or self.seen.get(stat.pid) == stat.start_ticks:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(stat.pid, os.WNOHANG)

    def wait_gone(self, limit_seconds: float = EXIT_WAIT_SECONDS) -> None:
        """Return once no member runs (reaping as they die), or after `limit_seconds`.

        A signal is delivered asynchronously: without this wait a killed grandchild can still be
        running for a moment after we return, so the run would briefly outlive itself.
        """
        deadline = time.monotonic() + limit_seconds
        while True:
            running = [s for s in self.members(leader_alive=False) if s.running]
            self.reap()
            if not running or time.monotonic() >= deadline:
                return
            time.sleep(0.01)
