"""W5: the report and compare on 10,000 case results. The results are set up without running
10,000 agents (benchmarks/report_results.py); a first report is made, then the report step of
`evals-pipeline run` is timed on them with that report as its history, as a re-run has it
(benchmarks/report_step.py, the suite's load shown apart), and `evals-pipeline compare` of the
two reports. No floor: the ratio is the report step plus compare to the 5 s target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.instance import prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.workloads import Workload, stamping_env

SUITE = Workload("W5", "10,000 cases", cases=10_000, transcript_mb=0.0, workers=4)
TARGET_SECONDS = 5.0


def _set_up(cli: list[str], *args: str, env: dict[str, str], cwd: Path) -> str:
    """A set-up command's output (not measured); fails loudly as a measured one does."""
    done = subprocess.run(
        [*cli, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return done.stdout


def _report(env: dict[str, str], cwd: Path, cases: int) -> tuple[Measured, dict[str, Any]]:
    measured = measure([sys.executable, "-m", "benchmarks.report_step"], env=env, cwd=cwd)
    figures: dict[str, Any] = json.loads(measured.output.strip().splitlines()[-1])
    if figures["cases"] != cases:
        raise SystemExit(f"report step: a report of {figures['cases']} cases, not {cases}")
    return measured, figures


def reporting(suite: Workload, tmp: Path) -> Outcome:
    path = suite.write(tmp / "suite")
    env = {**prepared_env(tmp), "EVALS_PIPELINE_SUITES": str(path)}
    cli = [sys.executable, "-m", "evals_pipeline.cli"]
    # Set-up: one case run for real (a one-case copy of the suite, same name), the suite's
    # partitions registered, every layer's record copied to each of its cases.
    one = Workload(suite.name, suite.description, 1, suite.transcript_mb, suite.workers)
    one_path = one.write(tmp / "one")
    _set_up(cli, "run", str(one_path), env=stamping_env(env, one_path), cwd=tmp)
    registered = _set_up(cli, "register", str(path), env=env, cwd=tmp)
    slug = registered.split(":", 1)[0]
    copier = [sys.executable, "-m", "benchmarks.report_results"]
    _set_up(copier, slug, str(suite.cases), env=env, cwd=tmp)

    # The first report: the history a re-run of the suite has. The second is timed.
    _report(env, tmp, suite.cases)
    report, figures = _report(env, tmp, suite.cases)
    compare = measure([*cli, "compare", "--suite", slug], env=env, cwd=tmp)
    if "case" not in compare.output:
        raise SystemExit(f"compare printed no comparison:\n{compare.output[-3000:]}")
    seconds = figures["report_seconds"] + compare.seconds
    return Outcome(
        parts={"report": report, "compare": compare},
        seconds=seconds,
        peak_mb=max(report.peak_mb, compare.peak_mb),
        ratio=seconds / TARGET_SECONDS,
        reference=f"the {TARGET_SECONDS:.0f} s target",
        figures={
            "report_load_seconds": figures["load_seconds"],
            "report_step_seconds": figures["report_seconds"],
        },
    )
