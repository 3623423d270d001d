"""`estimate` and `run --budget` count only what a run will run, on the real CLI: after a full
run of the graded suite (a priced agent, $0.10 a run, graded by a priced LLM grader, $0.05 a
grade, both on the scripted model server), stored results the run reuses cost nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evals_pipeline_tests.history.test_estimate_judging import reports, write_suite
from evals_pipeline_tests.test_cli import cli


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The suite and a home (Dagster instance and storage) after one full run of it."""
    root = tmp_path_factory.mktemp("reused")
    suite = write_suite(root / "p")
    (root / "home").mkdir()
    done = cli("run", str(suite), home=root / "home")
    assert done.code == 0, done.explain()
    return suite, root / "home"


def edit_one_input(suite: Path) -> None:
    text = suite.read_text()
    assert "input: question 1," in text
    suite.write_text(text.replace("input: question 1,", "input: question one,"))


def test_an_unchanged_suite_costs_nothing(ran: tuple[Path, Path]) -> None:
    suite, home = ran
    done = cli("estimate", str(suite), "--budget", "0.01", home=home)
    assert done.code == 0, done.explain()
    assert done.stdout.splitlines() == [
        "estimate: 3 cases x 1 agent, 3 stored results reused: nothing runs, ~$0.00"
    ]
    everything = cli("estimate", str(suite), "--no-cache", home=home)
    assert everything.stdout.startswith(
        "estimate: 3 cases x 1 agent, ~$0.4500 ($0.3000 agents + $0.1500 graders and judges) "
    ), everything.stdout


def test_an_edited_test_alone_is_counted_and_a_budget_over_it_runs_it(tmp_path: Path) -> None:
    """After a full run, one test's input edited: only that case is counted ($0.15), and a
    budget of $0.20, under the full run's $0.45 but over the edited case's cost, starts the run,
    which reuses the two stored cases and runs the edited one."""
    suite = write_suite(tmp_path / "p")
    home = tmp_path / "home"
    home.mkdir()
    assert cli("run", str(suite), home=home).code == 0
    edit_one_input(suite)
    done = cli("estimate", str(suite), home=home)
    assert done.code == 0, done.explain()
    line = (
        r"estimate: 3 cases x 1 agent, 2 stored results reused, ~\$0\.1500 \(\$0\.1000 agents "
        r"\+ \$0\.0500 graders and judges\) for the 1 that runs and ~\d+ s at 2 workers "
        r"\(from the last run\)"
    )
    assert re.fullmatch(line + "\n", done.stdout), done.stdout
    run = cli("run", str(suite), "--budget", "0.20", home=home)
    assert run.code == 0, run.explain()
    assert re.match(line + "\n", run.stdout), run.stdout
    assert "does not start" not in run.stderr
    assert len(reports(home)) == 2, "a second report: the run ran"
    assert "2 of 3 results reused from earlier runs" in run.stdout, run.stdout
    assert "a / t01: ok in " in run.stderr, run.stderr
    after = cli("estimate", str(suite), home=home)
    assert after.stdout.startswith("estimate: 3 cases x 1 agent, 3 stored results reused: ")
    # A grader edited: its case's run is reused, its grading counted.
    text = suite.read_text().replace(
        "question 2, assertions: [{type: llm-grader, prompt: Says done}]",
        "question 2, assertions: [{type: llm-grader, prompt: Says done.}]",
    )
    assert text != suite.read_text()
    suite.write_text(text)
    regrade = cli("estimate", str(suite), home=home)
    assert regrade.stdout.startswith(
        "estimate: 3 cases x 1 agent, 3 stored results reused (1 graded again), ~$0.0500 "
        "($0.00 agents + $0.0500 graders and judges) for the 1 graded again and ~"
    ), regrade.stdout
