"""W0-W3: a suite workload done bare (the floor) and by `evals-pipeline run`, one after the other;
the ratio is ours to the floor. W1-fresh's run starts on an empty DAGSTER_HOME."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from benchmarks import REPO
from benchmarks.instance import fresh_env, fresh_home_seconds, prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.workloads import STAMPS, STARTED_FILE, Workload, stamping_env


def floor(workload: Workload, tmp: Path, *, sandboxed: bool = False) -> Measured:
    """The workload done bare (benchmarks/floor.py), its agents and graders each under the
    sandbox the pipeline gives them when `sandboxed`."""
    argv = [sys.executable, "-m", "benchmarks.floor", workload.name, str(tmp / STARTED_FILE)]
    argv += ["--sandboxed"] if sandboxed else []
    return measure(argv, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp)


def ours(workload: Workload, tmp: Path) -> Measured:
    """`evals-pipeline run` of the workload's suite on a set-up instance (an empty home for a
    fresh-home workload: creating the instance counts) and an empty storage root."""
    suite = workload.write(tmp / "suite")
    env = stamping_env(fresh_env(tmp) if workload.fresh_home else prepared_env(tmp), suite)
    return measure(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(suite)], env=env, cwd=tmp
    )


def dagster_start(tmp: Path) -> float:
    """Dagster's own start-up on a set-up home (benchmarks/dagster_floor.py): from launch to
    the start of its first asset's body."""
    env = prepared_env(tmp / "dagster-floor")
    stamps = tmp / "dagster-floor" / STARTED_FILE
    argv = [sys.executable, "-m", "benchmarks.dagster_floor", str(stamps)]
    measured = measure(argv, env=env, cwd=tmp / "dagster-floor")
    return first_start(stamps) - measured.launched_at


def versus_floor(workload: Workload, tmp: Path) -> Outcome:
    """The runs, with their start-up: from the command's launch to its first agent's start;
    a start-up workload also shows Dagster's own (`dagster_start_s`). The ratio is to the bare
    floor; `x_sandboxed_floor` divides by the floor whose children run in the same sandbox as
    ours, which leaves the framework's own cost."""
    bare = floor(workload, tmp)
    floor_start = first_start(tmp / STARTED_FILE) - bare.launched_at
    sandboxed = floor(workload, tmp, sandboxed=True)
    framework = ours(workload, tmp)
    figures = {
        "x_sandboxed_floor": framework.seconds / sandboxed.seconds,
        "floor_start_s": floor_start,
        "start_s": first_start(tmp / "suite" / STAMPS / STARTED_FILE) - framework.launched_at,
        **written_figures(workload, bare, framework),
    }
    if workload.start_up:
        figures["dagster_start_s"] = dagster_start(tmp)
    if workload.fresh_home:
        # Creating an instance on an empty home alone (`local_instance`), beside a run's time.
        figures["fresh_home_s"] = fresh_home_seconds(tmp / "fresh-homes")
    return Outcome(
        parts={"floor": bare, "sandboxed_floor": sandboxed, "ours": framework},
        seconds=framework.seconds,
        peak_mb=framework.peak_mb,
        ratio=framework.seconds / bare.seconds,
        reference="the floor",
        figures=figures,
    )


def written_figures(workload: Workload, bare: Measured, framework: Measured) -> dict[str, float]:
    """The bytes each run wrote (measure.py: files, pipes, its agents' transcripts included),
    as multiples of the transcripts' bytes; nothing for a workload without transcripts."""
    transcripts = workload.transcript_bytes() if workload.transcript_mb else 0
    if not transcripts:
        return {}
    return {
        "transcripts_mb": transcripts / 1e6,
        "floor_written_x": bare.written_bytes / transcripts,
        "written_x": framework.written_bytes / transcripts,
    }


def first_start(stamps: Path) -> float:
    """The earliest start an agent of the workload noted (epoch seconds)."""
    return min(float(line) for line in stamps.read_text().split())
