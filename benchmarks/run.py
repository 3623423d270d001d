"""`make bench`: each workload done bare (the floor) and by evals-pipeline, one after the other
on this machine; prints wall time, ratio to the floor and process-tree peak memory, and appends
the figures with the commit to a JSONL file.

    python -m benchmarks.run [W0 W1 W2 ...] [--results FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.measure import Measured, measure
from benchmarks.workloads import WORKLOADS, Workload

REPO = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = REPO / ".evals" / "bench" / "results.jsonl"


def floor(workload: Workload, tmp: Path) -> Measured:
    argv = [sys.executable, "-m", "benchmarks.floor", workload.name]
    return measure(argv, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp)


def ours(workload: Workload, tmp: Path) -> Measured:
    """`evals-pipeline run` of the workload's suite on a fresh instance and storage root."""
    suite = workload.write(tmp / "suite")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp / "storage"),
    }
    (tmp / "dagster").mkdir()
    return measure(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(suite)], env=env, cwd=tmp
    )


def commit() -> str:
    found = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True, text=True
    )
    return found.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=sorted(WORKLOADS), metavar="W")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    args = parser.parse_args()
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"{'workload':<8} {'floor s':>8} {'floor MB':>9} {'ours s':>8} {'ours MB':>8} {'ratio':>6}"
    )
    print(header, flush=True)
    for name in args.workloads:
        workload = WORKLOADS[name]
        with tempfile.TemporaryDirectory(prefix=f"evals-bench-{name}-") as tmp:
            bare = floor(workload, Path(tmp))
            framework = ours(workload, Path(tmp))
        ratio = framework.seconds / bare.seconds
        print(
            f"{name:<8} {bare.seconds:>8.2f} {bare.peak_mb:>9.0f} {framework.seconds:>8.2f}"
            f" {framework.peak_mb:>8.0f} {ratio:>5.2f}x   {workload.description}",
            flush=True,
        )
        row = {
            "workload": name,
            "description": workload.description,
            "commit": commit(),
            "measured_ms": int(time.time() * 1000),
            "cpus": os.cpu_count(),
            "floor_seconds": round(bare.seconds, 3),
            "floor_peak_mb": round(bare.peak_mb, 1),
            "seconds": round(framework.seconds, 3),
            "peak_mb": round(framework.peak_mb, 1),
            "ratio": round(ratio, 3),
        }
        with args.results.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
    print(f"results appended to {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
