"""Reading Linux's /proc: who a process is (pid and start time), its parent, state and the
environment it was started with. Elsewhere every read answers "nothing", so callers degrade."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
LAST_PID = PROC / "sys" / "kernel" / "ns_last_pid"
DIRECT_RANGE = 256
"""Up to this many pids handed out since a tree's leader, a scan reads each one's stat
directly instead of listing /proc."""


@dataclass(frozen=True)
class ProcessStat:
    """One line of /proc/<pid>/stat, the fields we use; `start_ticks` guards against pid reuse."""

    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int
    start_ticks: int

    @property
    def running(self) -> bool:
        """Not a zombie waiting for its reaper, nor dead."""
        return self.state not in ("Z", "X", "x")


def _read(pid: int, name: str) -> bytes | None:
    """One /proc file of `pid`, read with plain os calls: scans read hundreds of them."""
    try:
        fd = os.open(f"{PROC}/{pid}/{name}", os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65_536):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_stat(pid: int) -> ProcessStat | None:
    """The process's stat, or None when it is gone (or there is no /proc)."""
    return _parse_stat(pid, _read(pid, "stat"))


def _process_stat(pid: int) -> ProcessStat | None:
    """`read_stat`, but None for a thread id too: /proc answers for a thread's id though it
    lists only processes. A thread (not its group's leader) has exit_signal -1."""
    text = _read(pid, "stat")
    if text is None or text.rsplit(b")", 1)[-1].split()[35:36] == [b"-1"]:
        return None
    return _parse_stat(pid, text)


def _parse_stat(pid: int, text: bytes | None) -> ProcessStat | None:
    if text is None:
        return None
    # "pid (comm) state ppid pgrp session ... starttime(22nd)": comm may hold spaces and ")".
    try:
        fields = text.rsplit(b")", 1)[1].split()
        return ProcessStat(
            pid, fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def all_pids() -> Iterator[int]:
    """Every pid /proc lists now (none without /proc)."""
    try:
        names = os.listdir(PROC)
    except OSError:
        return
    for name in names:
        if name.isdigit():
            yield int(name)


def all_stats() -> list[ProcessStat]:
    """The stat of every process now."""
    return [s for s in map(read_stat, all_pids()) if s is not None]


def last_pid() -> int | None:
    """The pid the kernel handed out last in our pid namespace, or None where unreadable."""
    try:
        return int(LAST_PID.read_bytes())
    except (OSError, ValueError):
        return None


class NewerStats:
    """The stats of the processes started after `first` (a pid just handed out), read without
    opening every process's stat: pids are handed out in increasing order until they wrap at
    pid_max, so while the kernel's last pid only grows, theirs lie in (first, last pid].

    A wrap is seen when the last pid drops between two reads; from then on (and where the last
    pid cannot be read) every process is read. Reads (`note`) come at least every second while a
    tree is watched, and no machine hands out pid_max (32,768 at the least) pids in a second."""

    def __init__(self, first: int) -> None:
        self.first = first
        self.last = last_pid()
        self.wrapped = self.last is None or self.last < first

    def note(self) -> None:
        """Read the kernel's last pid, to see a wrap: what a tree watched without scans (a
        sandboxed one) does every second instead."""
        if not self.wrapped:
            last = last_pid()
            if last is None or self.last is None or last < self.last:
                self.wrapped = True
            else:
                self.last = last

    def now(self) -> list[ProcessStat]:
        """The stats of every process that may have started after `first` (older ones too,
        once the pids wrapped: callers still compare start times)."""
        self.note()
        last = self.last
        if self.wrapped or last is None:
            return all_stats()
        if last - self.first <= DIRECT_RANGE:
            # Fewer pids handed out since than /proc lists: asking for each is cheaper than
            # listing /proc (~1 ms with a few hundred processes).
            pids: Iterable[int] = range(self.first + 1, last + 1)
            return [s for s in map(_process_stat, pids) if s is not None]
        first = self.first
        pids = [pid for pid in all_pids() if first < pid <= last]
        return [s for s in map(read_stat, pids) if s is not None]


def environ_has(pid: int, entry: bytes) -> bool:
    """Whether the environment `pid` was started with holds `entry` (b"NAME=value") exactly.

    Other users' processes and zombies read as empty, so they never match.
    """
    data = _read(pid, "environ")
    if data is None:
        return False
    return data.startswith(entry + b"\0") or (b"\0" + entry + b"\0") in data or data == entry


def environ_value(pid: int, name: bytes) -> bytes | None:
    """The value of `name` in the environment `pid` was started with, or None."""
    data = _read(pid, "environ")
    if data is None:
        return None
    prefix = name + b"="
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :]
    return None


def descendants(root: int, stats: list[ProcessStat]) -> set[int]:
    """The pids below `root` in the parent tree of `stats` (not `root` itself)."""
    children: dict[int, list[int]] = {}
    for stat in stats:
        children.setdefault(stat.ppid, []).append(stat.pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
