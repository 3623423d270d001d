"""Wall time and process-tree peak memory of one command, sampled from /proc (Linux)."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_SECONDS = 0.02


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mb: float
    output: str = ""


def tree_rss_kb(root: int) -> int:
    """The resident memory of `root` and every process below it, in kB."""
    total, pending, seen = 0, [root], set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        proc = Path(f"/proc/{pid}")
        try:
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in (proc / "task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):  # gone while we looked
            continue
    return total


def measure(argv: list[str], *, env: dict[str, str], cwd: Path) -> Measured:
    """Run `argv` to the end (its output kept); fail with its output if it does not exit 0."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kb(process.pid))
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    text = output.decode(errors="replace")
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}:\n{text[-3000:]}")
    return Measured(seconds=seconds, peak_mb=peak / 1024, output=text)
