"""The quickstart on EVALS_PIPELINE_EXECUTOR=multiprocess: each step in a process of its own,
the same figures and per-case results as the in-process run; and a re-grade of one case on it
(only `grades`, from the stored sessions) runs no agent.

The step processes are seen in the run's event log: every Dagster event carries the pid of the
process that made it, the run's own events the CLI's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from evals_pipeline.defs.executor import EXECUTOR_ENV
from evals_pipeline.defs.io_manager import latest_uris
from evals_pipeline.instance.local import local_instance
from evals_pipeline_tests.test_scale_out import SUITE, case_results, run_quickstart

PARTITION = "hasty|add-numbers"
PASS_RATES = {"careful": "90.0%", "hasty": "30.0%"}


def step_pids(
    instance: dg.DagsterInstance, run_ids: list[str] | None = None
) -> list[tuple[int, dict[str, int]]]:
    """Per run (default: every run): the pid of its run process (its RUN_START event's) and of
    each step that succeeded (its STEP_SUCCESS event's)."""
    found = []
    for run_id in run_ids or [run.run_id for run in instance.get_runs()]:
        run_pid, steps = 0, {}
        for entry in instance.all_logs(run_id):
            event = entry.dagster_event
            if event is None or event.pid is None:
                continue
            if event.event_type == dg.DagsterEventType.RUN_START:
                run_pid = event.pid
            elif event.is_step_success and event.step_key:
                steps[event.step_key] = event.pid
        assert run_pid and steps, run_id
        found.append((run_pid, steps))
    return found


def pass_rates(stdout: str) -> dict[str, str]:
    """Each agent's pass rate in the printed summary table."""
    return dict(re.findall(r"^(careful|hasty)\s+(?:\S+\s+){4}(\d+\.\d%)", stdout, re.M))


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("in-process")
    done, folder = run_quickstart(home, {EXECUTOR_ENV: "in_process"})
    assert pass_rates(done.stdout) == PASS_RATES, done.explain()
    # The probe below tells processes apart: here every step ran in the CLI's process.
    for run_pid, steps in step_pids(local_instance(home / "dagster")):
        assert set(steps.values()) == {run_pid}, (run_pid, steps)
    return case_results(folder)


def test_the_quickstart_on_multiprocess_matches_the_in_process_run(
    tmp_path: Path, in_process: dict[str, Any]
) -> None:
    done, folder = run_quickstart(tmp_path, {EXECUTOR_ENV: "multiprocess"})

    assert pass_rates(done.stdout) == PASS_RATES, done.explain()
    assert case_results(folder) == in_process, done.explain()
    # Every step ran in a process of its own, none in the CLI's (the runs' process).
    runs = step_pids(local_instance(tmp_path / "dagster"))
    assert len(runs) >= 2, runs  # the layers and the report
    every_step = [pid for _, steps in runs for pid in steps.values()]
    assert len(set(every_step)) == len(every_step), runs
    assert len({run_pid for run_pid, _ in runs}) == 1, runs  # the CLI's
    assert not {run_pid for run_pid, _ in runs} & set(every_step), runs
    assert any(key.endswith("case_pipeline") for _, steps in runs for key in steps), runs

    # A re-grade of one case on multiprocess: only `grades`, from the stored sessions.
    instance = local_instance(tmp_path / "dagster")
    before = {run.run_id for run in instance.get_runs()}
    kept = {
        layer: latest_uris(instance, dg.AssetKey(["quickstart", layer]), [PARTITION])[PARTITION]
        for layer in ("agent_runs", "sessions", "grades")
    }
    regrade = materialize_grades(tmp_path)
    assert regrade.returncode == 0, regrade.stderr[-3000:]
    assert "agent runs:" not in regrade.stderr, regrade.stderr[-3000:]  # no agent was run
    [new_run] = [run for run in instance.get_runs() if run.run_id not in before]
    made = {
        event.asset_key.path[-1]
        for event in instance.get_records_for_run(
            new_run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ).records
        if event.asset_key is not None
    }
    # The grade, and the failing case's entry on the failures list (defs/case_failures.py).
    assert made == {"grades", "failures"}
    for layer, uri in kept.items():
        now = latest_uris(instance, dg.AssetKey(["quickstart", layer]), [PARTITION])[PARTITION]
        assert (now == uri) == (layer != "grades"), (layer, uri, now)
    [(run_pid, steps)] = step_pids(instance, [new_run.run_id])
    assert list(steps) == ["quickstart__case_pipeline"], steps
    assert run_pid not in steps.values(), (run_pid, steps)


def materialize_grades(home: Path) -> subprocess.CompletedProcess[str]:
    """`dagster asset materialize` of one case's grades alone on the code location, on the
    multiprocess executor, with the CLI run's instance and storage."""
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "dagster"),
            "asset",
            "materialize",
            "-m",
            "evals_pipeline.definitions",
            "--select",
            "quickstart/grades",
            "--partition",
            PARTITION,
        ],
        env={
            **os.environ,
            "DAGSTER_HOME": str(home / "dagster"),
            "EVALS_PIPELINE_STORAGE": str(home / "storage"),
            "EVALS_PIPELINE_SUITES": str(SUITE),
            EXECUTOR_ENV: "multiprocess",
        },
        cwd=home,
        capture_output=True,
        text=True,
        timeout=600,
    )
