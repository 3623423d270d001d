"""W0-W3: a suite workload done bare (the floor) and by `evals-pipeline run`, one after the other;
the ratio is ours to the floor."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchmarks import REPO
from benchmarks.instance import prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.workloads import STARTED_FILE, Workload


def floor(workload: Workload, tmp: Path) -> Measured:
    argv = [sys.executable, "-m", "benchmarks.floor", workload.name, str(tmp / STARTED_FILE)]
    return measure(argv, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp)


def ours(workload: Workload, tmp: Path) -> Measured:
    """`evals-pipeline run` of the workload's suite on a set-up instance and an empty storage
    root."""
    suite = workload.write(tmp / "suite")
    env = prepared_env(tmp)
    return measure(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(suite)], env=env, cwd=tmp
    )


def versus_floor(workload: Workload, tmp: Path) -> Outcome:
    """Both runs, with their start-up: from the command's launch to its first agent's start."""
    bare = floor(workload, tmp)
    floor_start = first_start(tmp / STARTED_FILE) - bare.launched_at
    framework = ours(workload, tmp)
    ours_start = first_start(tmp / "suite" / STARTED_FILE) - framework.launched_at
    return Outcome(
        parts={"floor": bare, "ours": framework},
        seconds=framework.seconds,
        peak_mb=framework.peak_mb,
        ratio=framework.seconds / bare.seconds,
        reference="the floor",
        figures={"floor_start_s": floor_start, "start_s": ours_start},
    )


def first_start(stamps: Path) -> float:
    """The earliest start an agent of the workload noted (epoch seconds)."""
    return min(float(line) for line in stamps.read_text().split())
