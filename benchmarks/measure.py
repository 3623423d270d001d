"""Wall time and process-tree peak memory of one command, sampled from /proc (Linux)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SAMPLE_SECONDS = 0.05
"""Often enough for the peaks that matter (a transcript held for ~0.1 s or longer); each sample
reads /proc for every process and thread of the tree, and on 2 busy cores that reading is taken
from the command measured (at 20 ms, ~6% of a core beside evals-pipeline's ~25 threads)."""


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mb: float
    output: str = ""
    launched_at: float = 0.0  # epoch seconds, when the command was started
    written_bytes: int = 0  # what its process tree handed write(2): files, pipes, sockets


PF_FORKNOEXEC = 0x40
"""Linux task flag (/proc/<pid>/stat field 9): forked and not yet exec'd. Such a child still
shows its parent's memory (all of it, while a vfork shares it), so it is not counted twice."""


PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def rss_kb(pid: int) -> int:
    """The resident memory of one process, in kB (0 once it is gone, or while it is a fork that
    has not exec'd yet): statm's resident pages, VmRSS without the text of /proc/<pid>/status."""
    proc = Path(f"/proc/{pid}")
    try:
        flags = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[6])
        if flags & PF_FORKNOEXEC:
            return 0
        return int((proc / "statm").read_text().split()[1]) * PAGE_KB
    except (OSError, ValueError, IndexError):
        return 0


def tree_rss_kb(root: int) -> int:
    """The resident memory of `root` and every process below it, in kB."""
    total, pending, seen = 0, [root], set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += rss_kb(pid)
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):  # gone while we looked
            continue
    return total


class PeakSampler:
    """The highest `tree_rss_kb(root)` seen while it runs (minus the root's own memory when
    `below` is set: the processes this one started, not this one)."""

    def __init__(self, root: int, *, below: bool = False) -> None:
        self.root, self.below, self.peak_kb = root, below, 0

    def sample(self) -> None:
        own = rss_kb(self.root) if self.below else 0
        self.peak_kb = max(self.peak_kb, tree_rss_kb(self.root) - own)

    @property
    def peak_mb(self) -> float:
        return self.peak_kb / 1024


@contextmanager
def sampling(root: int, *, below: bool = False) -> Iterator[PeakSampler]:
    """A PeakSampler of `root`'s tree, sampled every SAMPLE_SECONDS in a thread until exit."""
    sampler = PeakSampler(root, below=below)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            sampler.sample()
            time.sleep(SAMPLE_SECONDS)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield sampler
    finally:
        done.set()
        thread.join()


def written_bytes() -> int:
    """`wchar` of this process (/proc/self/io): the bytes its threads and its reaped children,
    theirs included, handed write(2). Counted on any file system (tmpfs too), page cache or not."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def measure(argv: list[str], *, env: dict[str, str], cwd: Path) -> Measured:
    """Run `argv` to the end (its output kept); fail with its output if it does not exit 0.
    Its written bytes are this process's `wchar` before and after: the command is reaped here,
    and each process of its tree was reaped by its parent, which took on its count."""
    launched_at, start, wrote = time.time(), time.perf_counter(), written_bytes()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    with sampling(process.pid) as sampler:
        output, _ = process.communicate()
        seconds = time.perf_counter() - start
    text = output.decode(errors="replace")
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}:\n{text[-3000:]}")
    return Measured(
        seconds=seconds,
        peak_mb=sampler.peak_mb,
        output=text,
        launched_at=launched_at,
        written_bytes=written_bytes() - wrote,
    )
