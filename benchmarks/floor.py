"""The floor: a workload's cases done bare, as a shell loop would, with no framework. Each case
runs the agent, then its three graders on a JSON payload, `workers` cases at a time; sandboxed,
each of them under bubblewrap as the pipeline starts its children, so the sandbox's own cost
is the floor's too."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from benchmarks.workloads import GRADERS, HERE, Workload


def sandbox(argv: list[str], writable: list[Path]) -> list[str]:
    """`argv` under bubblewrap with the namespaces and mounts the pipeline gives its children
    (sandbox/bubblewrap.py): the host read-only, a private /tmp and PID namespace, what the
    private /tmp would hide of the Python and the benchmarks bound back read-only (a checkout
    under /tmp), and `writable` bound back."""
    shown = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), HERE.resolve()}
    hidden = sorted(p for p in shown if p.is_relative_to("/tmp"))
    binds = [arg for path in hidden for arg in ("--ro-bind", str(path), str(path))]
    binds += [arg for path in writable for arg in ("--bind", str(path), str(path))]
    head = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    return [*head, *mounts, *binds, "--", *argv]


def run_case(
    index: int,
    workload: Workload,
    folder: Path,
    started_file: Path | None = None,
    sandboxed: bool = False,
) -> float:
    """One case: the agent writes its output (and notes its start in `started_file`), each
    grader scores it; returns the mean score."""
    case = folder / f"case-{index}"
    case.mkdir()
    writable = [case, *([started_file.parent] if started_file else [])]
    wrap = partial(sandbox, writable=writable) if sandboxed else list
    prompt, output = case / "prompt.md", case / "output.json"
    prompt.write_text(f"Benchmark case {index}.")
    agent = [sys.executable, str(HERE / "fake_agent.py"), "--prompt-file", str(prompt)]
    agent += ["--output", str(output), "--transcript-mb", str(workload.transcript_mb)]
    if started_file is not None:
        agent += ["--started-file", str(started_file)]
    subprocess.run(wrap(agent), check=True, cwd=case)
    messages = json.loads(output.read_text())["output"]
    payload = json.dumps({"output": messages[-1]["content"], "output_path": str(output)})
    scores = []
    for _ in range(GRADERS):
        graded = subprocess.run(
            wrap([sys.executable, str(HERE / "grader.py")]),
            input=payload,
            capture_output=True,
            text=True,
            check=True,
            cwd=case,
        )
        scores.append(json.loads(graded.stdout)["score"])
    return sum(scores) / len(scores)


def run_floor(
    workload: Workload, started_file: Path | None = None, sandboxed: bool = False
) -> None:
    """Every case of `workload`, bare (or each process sandboxed); fails loudly if any case
    does not score 1."""
    with (
        tempfile.TemporaryDirectory(prefix="evals-floor-") as tmp,
        ThreadPoolExecutor(workload.workers) as pool,
    ):
        scores = list(
            pool.map(
                lambda i: run_case(i, workload, Path(tmp), started_file, sandboxed),
                range(workload.cases),
            )
        )
    if scores != [1.0] * workload.cases:
        raise SystemExit(f"floor of {workload.name}: not every case scored 1: {scores}")


if __name__ == "__main__":
    from benchmarks.workloads import WORKLOADS

    # `python -m benchmarks.floor W0 [STARTED_FILE] [--sandboxed]`
    args = [a for a in sys.argv[1:] if a != "--sandboxed"]
    started = Path(args[1]) if len(args) > 1 else None
    run_floor(WORKLOADS[args[0]], started, sandboxed="--sandboxed" in sys.argv)
