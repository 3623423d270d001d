"""Materializing a partition that is not registered says what is wrong and what to do (register
the suite's cases; keys are agent|case), from Dagster's CLI and from the Python API."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import UnregisteredPartitionError, case_partitions_name
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.dagster_dev import BIN
from evals_pipeline_tests.defs.conftest import write_suite
from evals_pipeline_tests.executor_passes import workers_with


def location_env(tmp_path: Path, suite: Path) -> dict[str, str]:
    """The code location's environment: the suite, its home and storage."""
    return {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_SUITES": str(suite),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }


def materialize(
    tmp_path: Path, env: dict[str, str], partition: str
) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "dagster"), "asset", "materialize", "-m", "evals_pipeline.definitions"]
    return subprocess.run(
        [*command, "--select", "demo/cases", "--partition", partition],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_dagster_cli_says_to_register_the_suite_without_a_traceback(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    (tmp_path / "dagster").mkdir()
    with workers_with(location_env(tmp_path, suite)) as env:
        before = materialize(tmp_path, env, "echo|greets")  # nothing registered yet
        assert before.returncode != 0
        assert "Traceback" not in before.stderr, before.stderr
        assert "Error: partition 'echo|greets' is not registered for suite 'demo'" in before.stderr
        assert "the suite has no registered cases yet" in before.stderr
        assert f"evals-pipeline register {suite}" in before.stderr

        register = [str(BIN / "evals-pipeline"), "register", str(suite)]
        subprocess.run(register, env=env, cwd=tmp_path, check=True, timeout=120)
        wrong = materialize(tmp_path, env, "echo|nope")
        assert wrong.returncode != 0 and "Traceback" not in wrong.stderr, wrong.stderr
        assert "case 'nope' is not one of its 2 registered cases (greets, waves)" in wrong.stderr
        assert "e.g. 'echo|greets'" in wrong.stderr

        swapped = materialize(tmp_path, env, "greets|echo")
        assert "'greets' is not an agent of the suite (its agents: echo, silent)" in swapped.stderr
        assert "agent first" in swapped.stderr

        right = materialize(tmp_path, env, "echo|greets")
        assert right.returncode == 0, right.stderr


def test_the_python_api_raises_the_same_advice(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path, [("greets", "hello")])
    defs = build_definitions([load_suite(suite)], str(tmp_path / "storage"))
    instance.add_dynamic_partitions(case_partitions_name("demo"), ["greets"])
    cases = defs.resolve_assets_def(dg.AssetKey(["demo", "cases"]))
    with pytest.raises(UnregisteredPartitionError) as raised:
        dg.materialize([cases], partition_key="silent|nope", instance=instance)
    assert isinstance(raised.value, dg.DagsterInvalidSubsetError)
    assert "case 'nope' is not one of its 1 registered cases (greets)" in str(raised.value)
    assert "evals-pipeline register" in str(raised.value)
