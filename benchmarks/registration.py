"""W4: registering a 10,000-case suite as a user does: `evals-pipeline validate` (load and
validate), `evals-pipeline register` (its partitions added), then the first tick of its cases
sensor on the code location `dagster dev` loads (benchmarks/sensor_tick.py). No floor: the
ratio is the total to the 10 s target."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.instance import prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.workloads import Workload

SUITE = Workload("W4", "10,000 cases", cases=10_000, transcript_mb=0.0, workers=4)
TARGET_SECONDS = 10.0


def _expect(part: str, measured: Measured, text: str) -> None:
    """Fail the benchmark when a command did not do the work it is timed for."""
    if text not in measured.output:
        raise SystemExit(f"{part}: expected {text!r} in its output:\n{measured.output[-3000:]}")


def registration(suite: Workload, tmp: Path) -> Outcome:
    path = suite.write(tmp / "suite")
    env = {**prepared_env(tmp), "EVALS_PIPELINE_SUITES": str(path)}
    cli = [sys.executable, "-m", "evals_pipeline.cli"]
    validate = measure([*cli, "validate", str(path)], env=env, cwd=tmp)
    _expect("validate", validate, f"= {suite.cases} partitions")
    register = measure([*cli, "register", str(path)], env=env, cwd=tmp)
    _expect("register", register, f"{suite.cases} cases registered")
    tick = measure([sys.executable, "-m", "benchmarks.sensor_tick"], env=env, cwd=tmp)
    ticked = json.loads(tick.output.strip().splitlines()[-1])
    if ticked["cases_in_cursor"] != suite.cases or ticked["partitions_added"]:
        raise SystemExit(f"sensor tick: not the registered suite's first tick: {ticked}")
    parts = {"validate": validate, "register": register, "sensor": tick}
    total = sum(m.seconds for m in parts.values())
    return Outcome(
        parts=parts,
        seconds=total,
        peak_mb=max(m.peak_mb for m in parts.values()),
        ratio=total / TARGET_SECONDS,
        reference=f"the {TARGET_SECONDS:.0f} s target",
        figures={
            "sensor_load_seconds": ticked["load_seconds"],
            "sensor_tick_seconds": ticked["tick_seconds"],
        },
    )
