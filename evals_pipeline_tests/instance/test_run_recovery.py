"""Runs whose runner process died are marked failed on start; live runners' runs and runs
without runner tags (launched by the daemon) are left alone."""

from __future__ import annotations

import subprocess

import dagster as dg

from evals_pipeline.instance.run_recovery import (
    RUNNER_HOST_TAG,
    RUNNER_PID_TAG,
    RUNNER_START_TAG,
    fail_crashed_runs,
    runner_tags,
)
from evals_pipeline.reaping.owner import this_runner
from evals_pipeline.reaping.proc_table import read_stat


@dg.op
def noop() -> None:
    pass


@dg.job
def a_job() -> None:
    noop()


def dead_runner_tags() -> dict[str, str]:
    """Tags naming a real process of this host that has since ended."""
    child = subprocess.Popen(["sleep", "30"])
    stat = read_stat(child.pid)
    assert stat is not None
    child.kill()
    child.wait()
    return {
        RUNNER_HOST_TAG: this_runner().host,
        RUNNER_PID_TAG: str(child.pid),
        RUNNER_START_TAG: str(stat.start_ticks),
    }


def test_only_runs_of_dead_runners_are_marked_failed() -> None:
    with dg.instance_for_test() as instance:

        def started(tags: dict[str, str]) -> str:
            run = instance.create_run_for_job(a_job, tags=tags, status=dg.DagsterRunStatus.STARTED)
            return run.run_id

        crashed = started(dead_runner_tags())
        live = started(runner_tags())
        reused = started({**runner_tags(), RUNNER_START_TAG: "1"})  # our pid, another start
        untagged = started({})
        assert sorted(fail_crashed_runs(instance)) == sorted([crashed, reused])
        runs = [instance.get_run_by_id(r) for r in (crashed, live, reused, untagged)]
        status = {run.run_id: run.status for run in runs if run is not None}
        assert status[crashed] == status[reused] == dg.DagsterRunStatus.FAILURE
        assert status[live] == status[untagged] == dg.DagsterRunStatus.STARTED
        logs = instance.all_logs(crashed)
        assert any("died before the run ended" in (e.message or "") for e in logs)
        assert fail_crashed_runs(instance) == []  # failed once, not again
