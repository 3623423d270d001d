"""The celery app a worker runs (`celery -A evals_pipeline.defs.celery_app worker`):
dagster-celery's step task, on the broker EVALS_PIPELINE_CELERY_BROKER names, watching its run
while its step runs, so a stopped or killed command stops the steps it sent (StoppableStep)."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

import celery
import dagster as dg
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from evals_pipeline.defs.executor import STOPPED_RUNS, celery_app_args
from evals_pipeline.instance.run_recovery import run_stopped
from evals_pipeline.progress_relay import stop_relaying
from evals_pipeline.stopping import request_stop, reset_stop, stopping, tally_at_stop

WATCH_SECONDS = 0.25
"""How often a step on a worker looks at its run: the delay from a stop to its agents' end."""


class StoppableStep(celery.Task):
    """The step task, stopped as an in-process step is (stopping.py: no agent or grader starts,
    those running end) once its run is canceled (Ctrl-C or SIGTERM of the command, the Dagster
    UI) or its command is gone (killed outright, on this host): dagster-celery's executor only
    revokes the steps not yet begun. The worker's process serves run after run: each step
    begins unstopped."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        packed = kwargs.get("execute_step_args_packed")
        step: Any = dg.deserialize_value(json.dumps(packed)) if packed is not None else None
        reset_stop()
        if step is None:
            return super().__call__(*args, **kwargs)
        done = threading.Event()
        watcher = threading.Thread(
            target=_watch, args=(step.instance_ref, step.run_id, done), daemon=True
        )
        with dg.DagsterInstance.from_ref(step.instance_ref) as instance:
            if run_stopped(instance, step.run_id):  # stopped before it began: nothing starts
                request_stop()
        watcher.start()
        try:
            events = super().__call__(*args, **kwargs)
            if stopping():  # first: the command counts it before the step is back
                events.insert(0, dg.serialize_value(_stop_tally(step)))
            return events
        finally:
            stop_relaying()  # the command's relay hears the step's last event before its end
            done.set()
            watcher.join()
            reset_stop()


def _stop_tally(step: Any) -> dg.DagsterEvent:
    """The engine event telling the command how many agent runs this stopped step cut short
    (defs/executor.py STOPPED_RUNS), for its closing line."""
    with dg.DagsterInstance.from_ref(step.instance_ref) as instance:
        run = instance.get_run_by_id(step.run_id)
        return instance.report_engine_event(
            STOPPED_RUNS.format(tally_at_stop().stopped),
            run,
            step_key=(step.step_keys_to_execute or [None])[0],
        )


def _watch(instance_ref: Any, run_id: str, done: threading.Event) -> None:
    """Until `done`, stop this process's work once run `run_id` is stopped (run_stopped)."""
    with dg.DagsterInstance.from_ref(instance_ref) as instance:
        while not done.wait(WATCH_SECONDS):
            stopped = False
            with contextlib.suppress(Exception):  # an instance busy a moment: look again
                stopped = run_stopped(instance, run_id)
            if stopped:
                request_stop()
                return


app = make_app(celery_app_args())

execute_plan = create_task(app, base=StoppableStep)
