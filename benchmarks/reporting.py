"""W5: the report and compare on 10,000 case results. The results are set up without running
10,000 agents (benchmarks/report_results.py); a first report is made, then the report step of
`evals-pipeline run` is timed on them with that report as its history, as a re-run has it
(benchmarks/report_step.py, the suite's load shown apart), and `evals-pipeline compare` of the
two reports. No floor: the ratio is the report step plus compare to the 5 s target.

W7: the same set-up for 1,000 cases x 3 agents with 10 MB sessions (every copy of a session
record names the one case's transcript files, read 3,000 times), and the suite's first report
timed: every case page made, none linked from an earlier report. Target: 15 s."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.instance import prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.workloads import Workload, stamping_env

SUITE = Workload("W5", "10,000 cases", cases=10_000, transcript_mb=0.0, workers=4)
TARGET_SECONDS = 5.0
HTML_SUITE = Workload("W7", "1,000 cases x 3 agents x 10 MB", 1_000, 10.0, 4, agents=3)
HTML_TARGET_SECONDS = 15.0
CLI = [sys.executable, "-m", "evals_pipeline.cli"]


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


def _copied_results(suite: Workload, tmp: Path) -> tuple[dict[str, str], str]:
    """The set-up: one case run for real (a one-case copy of the suite, same name), the suite's
    partitions registered, every layer's record copied to each of its cases. Returns the
    environment and the suite's slug."""
    path = suite.write(tmp / "suite")
    env = {**prepared_env(tmp), "EVALS_PIPELINE_SUITES": str(path)}
    one = replace(suite, cases=1)
    one_path = one.write(tmp / "one")
    _set_up(CLI, "run", str(one_path), env=stamping_env(env, one_path), cwd=tmp)
    registered = _set_up(CLI, "register", str(path), env=env, cwd=tmp)
    slug = registered.split(":", 1)[0]
    copier = [sys.executable, "-m", "benchmarks.report_results"]
    _set_up(copier, slug, str(suite.cases), env=env, cwd=tmp)
    return env, slug


def html_report(suite: Workload, tmp: Path) -> Outcome:
    """W7: the first report of the copied results, timed (its case pages all made)."""
    env, _ = _copied_results(suite, tmp)
    report, figures = _report(env, tmp, suite.cases * suite.agents)
    seconds = figures["report_seconds"]
    return Outcome(
        parts={"report": report},
        seconds=seconds,
        peak_mb=report.peak_mb,
        ratio=seconds / HTML_TARGET_SECONDS,
        reference=f"the {HTML_TARGET_SECONDS:.0f} s target",
        figures={"report_load_seconds": figures["load_seconds"], "report_step_seconds": seconds},
    )


def reporting(suite: Workload, tmp: Path) -> Outcome:
    env, slug = _copied_results(suite, tmp)
    cli = CLI
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
