"""`pytest --executor`: the executor passes keep the tests that run the Dagster graph (found in
their code), drop the others and those marked `not_on` that executor, and `--graph-tests ci`
keeps the CI set (executor_passes.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = "evals_pipeline_tests"


def collected(*args: str) -> set[str]:
    """The test ids `pytest --collect-only` keeps with `args`."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line}


def test_an_executor_pass_keeps_the_graph_tests_and_drops_the_rest() -> None:
    cli = f"{TESTS}/test_cli.py"
    kept = collected("--executor", "multiprocess", cli)
    assert "test_run_exits_0_when_every_case_passes" in kept  # `cli("run", ...)`
    assert "test_run_lists_every_failing_case" in kept  # through its module fixture
    assert "test_validate_quickstart_is_ok" not in kept  # `validate` runs no step
    assert "test_validate_quickstart_is_ok" in collected(cli)  # in-process: every test


def test_not_on_drops_a_test_from_that_executors_pass_only() -> None:
    resume = f"{TESTS}/test_resume.py"
    killed = "test_a_run_killed_half_way_resumes_with_only_the_missing_cases"
    assert killed in collected("--executor", "multiprocess", resume)
    assert killed not in collected("--executor", "celery", resume)
    ci = collected(
        "--executor", "multiprocess", "--graph-tests", "ci", resume, f"{TESTS}/test_cli.py"
    )
    assert killed in ci and "test_run_exits_0_when_every_case_passes" not in ci
