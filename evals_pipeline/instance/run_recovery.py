"""Runs whose process died: an in-process run (`evals-pipeline run`) killed outright stays
STARTED on the instance for ever. Each run carries its runner's host, pid and start time as
tags; on start, runs still in progress whose runner on this host is gone are marked failed.

Runs launched by a run launcher (`dagster dev`, the daemon) are the daemon's run monitoring's
job (`run_monitoring` in dagster.yaml); they carry no runner tags and are left alone here.
"""

from __future__ import annotations

import dagster as dg

from evals_pipeline.reaping.owner import Owner, this_runner

RUNNER_HOST_TAG = "evals/runner_host"
RUNNER_PID_TAG = "evals/runner_pid"
RUNNER_START_TAG = "evals/runner_start_ticks"  # guards against the pid being reused

IN_PROGRESS = [
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def runner_tags() -> dict[str, str]:
    """The tags naming the process that executes a run in-process: this one."""
    me = this_runner()
    return {
        RUNNER_HOST_TAG: me.host,
        RUNNER_PID_TAG: str(me.pid),
        RUNNER_START_TAG: str(me.start_ticks),
    }


def _runner(tags: dict[str, str]) -> Owner | None:
    try:
        return Owner(tags[RUNNER_HOST_TAG], int(tags[RUNNER_PID_TAG]), int(tags[RUNNER_START_TAG]))
    except (KeyError, ValueError):
        return None


def fail_crashed_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed every in-progress run whose runner process on this host is dead; their ids."""
    failed = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=IN_PROGRESS)):
        run = record.dagster_run
        runner = _runner(dict(run.tags))
        if runner is None or runner.alive():
            continue
        instance.report_run_failed(
            run,
            message=(
                f"The process that ran it (pid {runner.pid} on {runner.host}) died before the "
                "run ended (killed or crashed); marked failed by evals-pipeline on its next start."
            ),
        )
        failed.append(run.run_id)
    return failed


def cancel_own_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark canceled every in-progress run this process runs: an interrupted `evals-pipeline
    run` ends without finishing them (cli/interrupts.py). Their ids."""
    me = this_runner()
    canceled = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=IN_PROGRESS)):
        run = record.dagster_run
        if _runner(dict(run.tags)) != me:
            continue
        instance.report_run_canceled(run, message="Interrupted (Ctrl-C or SIGTERM).")
        canceled.append(run.run_id)
    return canceled


STOPPED = (
    dg.DagsterRunStatus.CANCELING,
    dg.DagsterRunStatus.CANCELED,
    dg.DagsterRunStatus.FAILURE,
)


def run_stopped(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Whether the steps of run `run_id` running elsewhere (a celery worker) should stop: the
    run was canceled (an interrupted command, cli/interrupts.py, or the Dagster UI) or failed,
    or the process that runs it on this host died (a command killed outright)."""
    run = instance.get_run_by_id(run_id)
    if run is None or run.status in STOPPED:
        return True
    runner = _runner(dict(run.tags))
    return runner is not None and not runner.alive()
