"""W6: a 10-case, one-agent backfill launched through the Dagster daemon, as the UI launches it,
against `evals-pipeline run` of the same cases; W6-scattered: three cases of the ten picked apart
(a Dagster run holds one partition range, so the backfill makes a run per case), against
`evals-pipeline run --test-id` of those three. The CLI runs first on a home of its own; then
`dagster dev` serves the suite on 127.0.0.1 (another home), the backfill of every asset of the
suite over those cases is launched over GraphQL, and its time runs from the launch to the end of
its last run. The ratio is the daemon's time to the CLI's."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from benchmarks import REPO
from benchmarks.instance import prepared_env
from benchmarks.measure import Measured, measure, sampling
from benchmarks.outcome import Outcome
from benchmarks.workloads import Workload, stamping_env
from evals_pipeline_tests.dagster_dev import backfill, dagster_dev, graphql

SUITE = Workload("W6", "10 cases", cases=10, transcript_mb=0.0, workers=4)
ASSETS = ("cases", "agent_runs", "sessions", "grades", "judgments", "eval_report")
SCATTERED = (1, 4, 7)
"""W6-scattered's cases: no two neighbours."""
AGENT = "fake"
TIMEOUT_SECONDS = 900

BACKFILL_RUNS = """
query BackfillRuns($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId status startTime endTime } }
  }
}"""


def _cli(suite: Workload, tmp: Path, cases: list[int]) -> Measured:
    path = suite.write(tmp / "suite")
    env = stamping_env(prepared_env(tmp), path)
    picked = [] if len(cases) == suite.cases else [f"--test-id=case-{i}" for i in cases]
    argv = [sys.executable, "-m", "evals_pipeline.cli", "run", str(path), *picked]
    return measure(argv, env=env, cwd=tmp)


def _daemon(suite: Workload, tmp: Path, cases: list[int]) -> tuple[Measured, dict[str, float]]:
    """The backfill's time from its launch to its last run's end, the peak memory of everything
    `dagster dev` runs meanwhile, and its start-up and first-run latency."""
    path = suite.write(tmp / "suite")
    env = stamping_env({**prepared_env(tmp), "EVALS_PIPELINE_SUITES": str(path)}, path)
    registered = measure(
        [sys.executable, "-m", "evals_pipeline.cli", "register", str(path)], env=env, cwd=tmp
    )
    slug = registered.output.split(":", 1)[0]
    started = time.monotonic()
    args = ["-w", str(REPO / "workspace.yaml")]
    with dagster_dev(args, REPO, env, tmp / "dagster-dev.log") as port:
        ready = time.monotonic() - started
        with sampling(os.getpid(), below=True) as sampler:
            launched = time.time()
            backfill_id = backfill(
                port,
                [f"{AGENT}|case-{i}" for i in cases],
                [[slug, asset] for asset in ASSETS],
                TIMEOUT_SECONDS,
            )
        runs = graphql(
            port,
            BACKFILL_RUNS,
            {"filter": {"tags": [{"key": "dagster/backfill", "value": backfill_id}]}},
        )["runsOrError"]["results"]
    if not runs or any(r["status"] != "SUCCESS" for r in runs):
        raise SystemExit(f"backfill {backfill_id}: not every run succeeded: {runs}")
    ended = max(float(r["endTime"]) for r in runs)
    first = min(float(r["startTime"]) for r in runs)
    figures = {
        "dagster_dev_start_seconds": ready,
        "first_run_start_seconds": first - launched,
        "backfill_runs": float(len(runs)),
    }
    return Measured(seconds=ended - launched, peak_mb=sampler.peak_mb), figures


def through_daemon(suite: Workload, tmp: Path, scattered: bool = False) -> Outcome:
    cases = list(SCATTERED) if scattered else list(range(suite.cases))
    cli = _cli(suite, tmp / "cli", cases)
    daemon, figures = _daemon(suite, tmp / "daemon", cases)
    return Outcome(
        parts={"cli": cli, "daemon": daemon},
        seconds=daemon.seconds,
        peak_mb=daemon.peak_mb,
        ratio=daemon.seconds / cli.seconds,
        reference="the CLI",
        figures=figures,
    )
