"""Choosing the executor: in-process unless EVALS_PIPELINE_EXECUTOR says multiprocess or celery;
a wrong setting is a clear error naming the variable and the fix; the jobs a worker rebuilds from
the suite file run on the chosen executor."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.definitions import build_definitions, load_suites
from evals_pipeline.defs.executor import (
    BROKER_ENV,
    EXECUTOR_ENV,
    ExecutorSettingError,
    executor_from_env,
    in_process_executor,
    multiprocess_executor,
)
from evals_pipeline.defs.suite_run import reconstruct_run_job
from evals_pipeline_tests.defs.conftest import QUICKSTART


def test_in_process_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    assert executor_from_env() is in_process_executor()
    monkeypatch.setenv(EXECUTOR_ENV, "in_process")
    assert executor_from_env() is in_process_executor()
    assert in_process_executor().name == dg.in_process_executor.name  # configured alike


def test_celery_without_a_broker_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "celery")
    monkeypatch.delenv(BROKER_ENV, raising=False)
    with pytest.raises(ExecutorSettingError, match=f"{EXECUTOR_ENV}=celery needs {BROKER_ENV}"):
        executor_from_env()


def test_an_unknown_executor_lists_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "k8s")
    with pytest.raises(
        ExecutorSettingError,
        match="names no executor: use one of in_process, multiprocess, celery",
    ):
        executor_from_env()


def test_multiprocess_is_dagsters_configured_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "multiprocess")
    executor = executor_from_env()
    assert executor is multiprocess_executor()
    assert executor.name == dg.multiprocess_executor.name
    fields = executor.config_schema.as_field().config_type.fields  # type: ignore[attr-defined]
    assert "max_concurrent" in fields and "start_method" in fields
    # Dagster runs it only on a reconstructable job and a persistent instance, as its own.
    assert executor.get_requirements({}) == dg.multiprocess_executor.get_requirements({})


def test_the_jobs_a_worker_rebuilds_use_the_chosen_executor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "celery")
    monkeypatch.setenv(BROKER_ENV, "redis://127.0.0.1:1/0")
    job = reconstruct_run_job(str(QUICKSTART), str(tmp_path), "layers", workers=3)
    assert job.executor_def.name == "celery"
    assert {k.path[-1] for k in job.asset_layer.executable_asset_keys} >= {"cases", "grades"}
    monkeypatch.delenv(EXECUTOR_ENV)
    assert reconstruct_run_job(str(QUICKSTART), str(tmp_path), "report").executor_def.name == (
        "in_process"
    )


def test_the_cli_reports_a_bad_executor_setting_without_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, EXECUTOR_ENV: "celery", "DAGSTER_HOME": str(tmp_path / "dagster")}
    env.pop(BROKER_ENV, None)
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(QUICKSTART)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"error: {EXECUTOR_ENV}=celery needs {BROKER_ENV}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_code_location_of_its_own_passes_any_executor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What docs/scale-out.md shows for the k8s and docker executors."""
    monkeypatch.setenv(EXECUTOR_ENV, "celery")  # an explicit executor wins over the setting
    monkeypatch.delenv(BROKER_ENV, raising=False)
    defs = build_definitions(
        load_suites([QUICKSTART]), str(tmp_path), executor=dg.multiprocess_executor
    )
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.executor_def is dg.multiprocess_executor
