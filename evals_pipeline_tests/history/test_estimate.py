"""The estimate before a run, from report files the real pipeline wrote: two runs of a suite of
LLM targets priced per token, answering from the scripted model server on 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean

import dagster as dg
import pyarrow.parquet as pq
import pytest

from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.history.estimate import (
    PlannedRun,
    estimate_run,
    history_of,
    read_past_runs,
    render_estimate,
)
from evals_pipeline.history.outcomes import CASES_FILE
from evals_pipeline.reporting.tables import CASES_SCHEMA
from evals_pipeline.storage.parquet import arrow_rows
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.scheduling.test_run_budget import RUN_COST, write_suite

SUITE = "budgeted"


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A storage root holding two reports of a 3-test x 2-agent suite."""
    root = tmp_path_factory.mktemp("estimate")
    suite = write_suite(root / "p", tests=3, workers=2, targets=("a", "b"))
    loaded = load_suite(suite)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(loaded)))
    with dg.instance_for_test() as instance:
        for _ in range(2):
            run_suite(
                instance,
                load_suite(suite),
                str(root / "storage"),
                agents=["a", "b"],
                case_keys=keys,
                echo=lambda _: None,
            )
    yield root / "storage"


def pair_means(storage: Path) -> dict[tuple[str, str], float]:
    """Each (case, agent)'s mean duration over the reports, read straight from cases.parquet."""
    seen: dict[tuple[str, str], list[int]] = defaultdict(list)
    for path in storage.glob(f"{SUITE}/eval_report/*/cases.parquet"):
        for row in pq.read_table(path).to_pylist():
            seen[(row["case_key"], row["agent"])].append(row["duration_ms"])
    return {k: fmean(v) for k, v in seen.items()}


def plan(*agents: str, tests: int = 3, trials: int = 1) -> list[PlannedRun]:
    return [PlannedRun(f"t{i:02d}", a, trials) for a in agents for i in range(tests)]


def test_history_reads_every_report(storage: Path) -> None:
    history = history_of(storage, SUITE)
    assert len(history) == 2
    assert all(len(report) == 6 for report in history)
    assert history_of(storage, SUITE, last=1) == history[1:]
    folders = sorted(storage.glob(f"{SUITE}/eval_report/*/"))
    assert sum(len(read_past_runs(f)) for f in folders) == 12


def test_cost_and_time_from_the_last_runs(storage: Path) -> None:
    history = history_of(storage, SUITE)
    means = pair_means(storage)
    one = estimate_run(SUITE, plan("a", "b"), history, workers=1)
    assert (one.cases, one.agents, one.runs, one.from_reports) == (3, 2, 6, 2)
    assert one.cost_usd == pytest.approx(6 * RUN_COST)
    # One worker: the runs one after another; as many workers as runs: the longest one.
    assert one.duration_s == pytest.approx(sum(means.values()) / 1000)
    wide = estimate_run(SUITE, plan("a", "b"), history, workers=8)
    assert wide.duration_s == pytest.approx(max(means.values()) / 1000)
    two = estimate_run(SUITE, plan("a", "b"), history, workers=2)
    assert wide.duration_s <= two.duration_s <= one.duration_s
    assert two.without_figures == 0


def test_trials_and_new_cases(storage: Path) -> None:
    history = history_of(storage, SUITE)
    tripled = estimate_run(SUITE, plan("a", trials=3), history, workers=1)
    assert tripled.runs == 9 and tripled.cost_usd == pytest.approx(9 * RUN_COST)
    grown = estimate_run(SUITE, plan("a", tests=5), history, workers=1)
    assert grown.without_figures == 2  # t03, t04 never ran: counted at agent a's mean
    assert grown.cost_usd == pytest.approx(5 * RUN_COST)
    a_mean = fmean(v for (_, agent), v in pair_means(storage).items() if agent == "a")
    known = sum(v for (case, agent), v in pair_means(storage).items() if agent == "a")
    assert grown.duration_s == pytest.approx((known + 2 * a_mean) / 1000)
    assert "; 2 never ran before, counted at the mean" in render_estimate(grown)


def test_the_line(storage: Path) -> None:
    estimate = estimate_run(SUITE, plan("a", "b"), history_of(storage, SUITE), workers=4)
    line = render_estimate(estimate)
    assert re.fullmatch(
        r"estimate: 3 cases x 2 agents, ~\$0\.6000 and ~\d+ s at 4 workers \(from the last 2 runs\)",
        line,
    ), line


def test_no_history_says_so(tmp_path: Path) -> None:
    assert history_of(tmp_path, SUITE) == []
    estimate = estimate_run(SUITE, plan("a"), [], workers=3)
    assert estimate.cost_usd is None and estimate.duration_s is None
    assert render_estimate(estimate, tmp_path) == (
        f"estimate: 3 cases x 1 agent; no past run of {SUITE} under {tmp_path} to estimate "
        "cost and time from"
    )


def test_estimate_command(storage: Path) -> None:
    suite = storage.parent / "p" / "budgeted.eval.yaml"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "evals_pipeline.cli", "estimate", str(suite)),
            *("--target", "a", "--storage", str(storage), "--workers", "1", "--budget", "0.15"),
            "--no-cache",  # every case counted, though its results are stored
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(
        r"estimate: 3 cases x 1 agent, ~\$0\.3000 and ~\d+ s at 1 worker "
        r"\(from the last 2 runs\)",
        lines[0],
    ), done.stdout
    assert lines[1] == (
        "the budget of $0.15 is under the estimate of ~$0.3000 (agents, graders and judges, from "
        "past runs): the run does not start; raise --budget, or run fewer cases (--test-id, "
        "--target)"
    )


def test_a_run_under_a_millisecond_counts_and_one_that_never_started_does_not(
    tmp_path: Path,
) -> None:
    """A mock agent can answer in 0 ms: that is its figure. A setup error never ran the agent."""
    rows = [
        {"case_key": "t00", "agent": "a", "cost_usd": 0.0, "duration_ms": 0, "verdict": "pass"},
        {
            "case_key": "t01",
            "agent": "a",
            "duration_ms": 0,
            "verdict": "error",
            "failure_stage": "setup",
        },
        {"case_key": "t02", "agent": "a", "cost_usd": 0.1, "duration_ms": 120, "verdict": "fail"},
    ]
    pq.write_table(arrow_rows(rows, CASES_SCHEMA), tmp_path / CASES_FILE)
    assert [(r.case_key, r.duration_ms) for r in read_past_runs(tmp_path)] == [
        ("t00", 0),
        ("t02", 120),
    ]
