"""`run --budget USD`: the run-level spend cap over every agent, with real costs: LLM targets
priced per token answering from the scripted model server on 127.0.0.1, through the layers and
through the real `evals-pipeline run` command and Dagster instance."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.scheduling import NOT_RUN_PREFIX
from evals_pipeline.suites import RunOptions, load_suite, resolve_cases, with_run_options
from evals_pipeline_tests.test_cli import cli

# Every run reads 1000 input tokens at $100 per million: $0.10 a run.
RUN_COST = 0.10
SCRIPT = (
    "side_requests: false\nturns: [{text: done, usage: {input_tokens: 1000, output_tokens: 0}}]\n"
)


def write_suite(root: Path, tests: int, workers: int, targets: tuple[str, ...] = ("a",)) -> Path:
    """A suite of `tests` tests over LLM targets that each cost RUN_COST a run."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "model.yaml").write_text(SCRIPT)
    lines = [
        "name: budgeted",
        f"execution: {{targets: [{', '.join(targets)}], workers: {workers}}}",
        "targets:",
        *(
            f"  - {{name: {t}, provider: openai, model: scripted, "
            "model_server: {script: model.yaml}, pricing: {input: 100, output: 100}}"
            for t in targets
        ),
        "tests:",
        *(
            f"  - {{id: t{i:02d}, input: question {i}, assertions: [{{type: contains, value: done}}]}}"
            for i in range(tests)
        ),
    ]
    path = root / "budgeted.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_one_worker_stops_exactly_at_the_budget(tmp_path: Path) -> None:
    # $0.25: runs 1 and 2 leave $0.20 < $0.25 spent, run 3 reaches $0.30; 7 are never launched.
    suite = write_suite(tmp_path / "p", tests=10, workers=1)
    cases = with_run_options(resolve_cases(load_suite(suite)), RunOptions(budget_usd=0.25))
    runs = run_agents(cases, tmp_path / "runs", workers=1)
    launched = [r for r in runs if r.not_run is None]
    assert [r.case_key for r in launched] == ["t00", "t01", "t02"]
    skipped = [r for r in runs if r.not_run is not None]
    assert len(skipped) == 7
    assert all(r.error is None and not r.setup_failed for r in skipped)
    assert {r.not_run for r in skipped} == {"not run: run budget of $0.2500 spent ($0.3000)"}, (
        "the reason names the budget and the spend when the run stopped"
    )
    sessions = enrich_runs(runs, tmp_path / "sessions")
    assert len(sessions) == 3
    assert sum(s.cost_usd or 0 for s in sessions) == pytest.approx(3 * RUN_COST)
    grades = grade_cases(cases, sessions, workers=1)
    assert [(g.test_id, g.verdict) for g in grades] == [(f"t0{i}", "pass") for i in range(3)]


def test_without_a_budget_every_case_runs(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "p", tests=4, workers=2)
    runs = run_agents(resolve_cases(load_suite(suite)), tmp_path / "runs", workers=2)
    assert [r.not_run for r in runs] == [None] * 4


def test_run_budget_stops_the_command_across_agents(tmp_path: Path) -> None:
    """Two agents x 8 tests, 2 workers, `--budget 0.45`: the cap spans both agents; the rest
    are not run, listed with the reason in the output and the report, and the exit code is 3."""
    workers, budget = 2, 0.45
    suite = write_suite(tmp_path / "p", tests=8, workers=workers, targets=("a", "b"))
    (tmp_path / "home").mkdir()
    done = cli("run", str(suite), "--budget", str(budget), home=tmp_path / "home")
    assert done.code == 3, done.explain()
    assert "estimate: 8 cases x 2 agents, ~$88.00 (guess: no previous run;" in done.stdout
    report_path = next((tmp_path / "home" / "storage").glob("budgeted/eval_report/*/report.json"))
    report = json.loads(report_path.read_text())
    ran = sum(a["cases"] for a in report["agents"])
    spent = sum(a["cost_usd"] for a in report["agents"])
    not_run = report["not_run_cases"]
    assert ran + len(not_run) == 16 and report["not_run"] == len(not_run)
    # The budget was reached, and passed by no more than the runs in flight when it was: the
    # last launch saw less than the budget spent, and at most `workers` runs finished after it.
    assert spent >= budget
    assert spent < budget + workers * RUN_COST
    assert ran == round(spent / RUN_COST)
    assert 5 <= ran <= 6
    assert all(c["reason"].startswith(NOT_RUN_PREFIX + " of $0.4500 spent") for c in not_run)
    assert {c["agent"] for c in not_run} <= {"a", "b"}
    assert f"Not run ({len(not_run)}): not run: run budget of $0.4500 spent" in done.stdout
    summary = (report_path.parent / "summary.md").read_text()
    assert "## Not run" in summary and f"{len(not_run)} registered" in summary
    # Nothing that ran errored: the not-run cases are no errors and no failures.
    assert report["failures"] == []


def test_a_zero_budget_runs_nothing(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "p", tests=2, workers=1)
    (tmp_path / "home").mkdir()
    done = cli("run", str(suite), "--budget", "0", home=tmp_path / "home")
    assert done.code == 3, done.explain()
    assert "Not run (2): not run: run budget of $0.0000 spent ($0.0000)" in done.stdout


def test_budget_must_be_an_amount(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "p", tests=1, workers=1)
    (tmp_path / "home").mkdir()
    done = cli("run", str(suite), "--budget", "lots", home=tmp_path / "home")
    assert done.code == 2
    assert "lots is not an amount in USD" in done.stderr


def test_the_budget_spans_separate_dagster_runs_of_one_suite(tmp_path: Path) -> None:
    """Targets a and c (not neighbours) run as two Dagster runs: c gets what a left."""
    suite = write_suite(tmp_path / "p", tests=2, workers=1, targets=("a", "b", "c"))
    with dg.instance_for_test() as instance:
        outcome = run_suite(
            instance,
            load_suite(suite),
            str(tmp_path / "storage"),
            agents=["a", "c"],
            case_keys=["t00", "t01"],
            options=RunOptions(budget_usd=0.25),
            echo=lambda _: None,
        )
    assert len(outcome.run_ids) == 3  # a, c, the report
    ran = {a.agent: a.cases for a in outcome.report.agents if a.cases}
    assert ran == {"a": 2, "c": 1}  # $0.20 spent by a, $0.05 left: one run of c reaches it
    assert [(c.agent, c.test_id) for c in outcome.report.not_run_cases] == [("c", "t01")]
    assert outcome.report.not_run_cases[0].reason == (
        "not run: run budget of $0.0500 spent ($0.1000)"
    )


def test_dependents_of_a_case_not_run_are_not_run_either(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "p", tests=1, workers=1)
    text = suite.read_text().replace(
        "tests:\n",
        "tests:\n"
        "  - {id: later, input: q, depends_on: [t00], assertions: [{type: contains, value: done}]}\n"
        "  - {id: first, input: q, assertions: [{type: contains, value: done}]}\n",
    )
    suite.write_text(text)
    cases = with_run_options(resolve_cases(load_suite(suite)), RunOptions(budget_usd=0.05))
    runs = {r.case_key: r for r in run_agents(cases, tmp_path / "runs", workers=1)}
    # Wave 1 runs first and t00 one after the other: first reaches the budget, t00 is not run;
    # then later, whose dependency was not run, is not run either (no "Skipped: ..." error).
    assert runs["first"].not_run is None and runs["first"].error is None
    assert runs["t00"].not_run is not None
    assert runs["later"].not_run is not None and runs["later"].error is None
