"""One child's process tree: found by the parent tree while its leader lives, by the leader's
session and group, and by the token in the environment (setsid escapees included), signalled,
and reaped when it was re-parented to us."""

from __future__ import annotations

import contextlib
import os
import select
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
EXIT_LOOK_SECONDS = 0.05  # the longest sleep between two scans for killed members
NO_PIDFD_LOOK_SECONDS = 0.01


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

    def members(
        self, *, leader_alive: bool, stats: list[ProcessStat] | None = None
    ) -> list[ProcessStat]:
        """The tree's processes now (among `stats`, a scan just made), zombies included. The
        parent tree is only followed while the leader is unreaped: after that its pid may belong
        to someone else."""
        stats = self.newer.now() if stats is None else stats
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

    def end(self, limit_seconds: float = EXIT_WAIT_SECONDS) -> None:
        """SIGKILL every member the leader left (it is reaped), and return once none runs,
        reaping those re-parented to us as they die; or after `limit_seconds`.

        A signal is delivered asynchronously: without this wait a killed grandchild can still be
        running for a moment after we return, so the run would briefly outlive itself. One scan
        of /proc per round both finds and reaps; between rounds we sleep until one of the
        members exits (a pidfd each), not on a clock.
        """
        deadline = time.monotonic() + limit_seconds
        killed: set[tuple[int, int]] = set()
        while True:
            stats = self.newer.now()
            running = [s for s in self.members(leader_alive=False, stats=stats) if s.running]
            for stat in running:
                if (stat.pid, stat.start_ticks) not in killed:
                    send_signal(stat, signal.SIGKILL)
                    killed.add((stat.pid, stat.start_ticks))
            self._reap(stats)
            left = deadline - time.monotonic()
            if not running or left <= 0:
                return
            _await_any_exit(running, min(left, EXIT_LOOK_SECONDS))

    def _reap(self, stats: list[ProcessStat]) -> None:
        """Collect the exit status of members re-parented to us (we are their subreaper), so
        they do not stay zombies of the runner: those met alive, and any in the leader's session
        (no other process can be in it: its id stays taken while one is)."""
        me = os.getpid()
        for stat in stats:
            if stat.ppid != me or stat.running or stat.pid == self.leader:
                continue
            if stat.sid == self.leader or self.seen.get(stat.pid) == stat.start_ticks:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(stat.pid, os.WNOHANG)


def _await_any_exit(stats: list[ProcessStat], limit_seconds: float) -> None:
    """Return once one of `stats` has exited, or after `limit_seconds`. A pid taken by another
    process meanwhile only costs the wait's limit; without pidfds, the limit is short."""
    poller = select.poll()
    fds: list[int] = []
    try:
        for stat in stats:
            try:
                fds.append(os.pidfd_open(stat.pid))
            except AttributeError:  # no pidfds here (not Linux 5.3+): look again soon
                time.sleep(min(limit_seconds, NO_PIDFD_LOOK_SECONDS))
                return
            except OSError:  # gone already: look again now
                return
            poller.register(fds[-1], select.POLLIN)
        poller.poll(limit_seconds * 1000)
    finally:
        for fd in fds:
            os.close(fd)
