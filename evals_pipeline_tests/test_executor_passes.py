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


def collected(*args: str, cwd: Path = REPO) -> set[str]:
    """The test ids `pytest --collect-only` keeps with `args`, run in `cwd`."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
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


PROBE = """
import pytest

from evals_pipeline.defs.suite_run import run_suite


@pytest.mark.not_on("celery", reason="a probe")
def test_marked():
    run_suite(None, None)


def test_unmarked():
    run_suite(None, None)


def test_no_graph():
    pass
"""


def test_not_on_drops_a_test_from_that_executors_pass_only(tmp_path: Path) -> None:
    # A package of its own (its name starts as ours: the source reader follows it), since no
    # test of the suite is marked.
    package = tmp_path / "evals_pipeline_tests_probe"
    package.mkdir()
    (package / "__init__.py").touch()
    (package / "test_probe.py").write_text(PROBE)

    def probe(executor: str) -> set[str]:
        args = ("-p", "evals_pipeline_tests.executor_passes", "--executor", executor)
        return collected(*args, str(package), cwd=tmp_path)

    assert probe("in_process") == {"test_marked", "test_unmarked", "test_no_graph"}
    assert probe("multiprocess") == {"test_marked", "test_unmarked"}
    assert probe("celery") == {"test_unmarked"}


def test_the_ci_set_keeps_its_modules_graph_tests_only() -> None:
    resume = f"{TESTS}/test_resume.py"
    killed = "test_a_run_killed_half_way_resumes_with_only_the_missing_cases"
    ci = collected(
        "--executor", "multiprocess", "--graph-tests", "ci", resume, f"{TESTS}/test_cli.py"
    )
    assert killed in ci and "test_run_exits_0_when_every_case_passes" not in ci
