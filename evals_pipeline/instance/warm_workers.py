"""Run workers forked from a warm process.

Dagster's code server starts each run's worker with multiprocessing's "spawn": a new interpreter
that imports Dagster, its storage and our layers before the run's first step, 3-4 s on two cores
for every run a backfill, a sensor or the UI launches. This fork server imports them once, then
forks a worker per run, which only loads the code location (the suites) and runs.

The launcher (run_launcher.py) starts the server and asks over a socket pair, one JSON line per
request: `{"run_id": ..., "instance_ref": ...}` is answered `{"pid": N}` once the worker is
forked, `{"stale": true}` when a module the server imported changed on disk since (a new server
then takes over), or `{"error": ...}`. The server ends when the launcher's end of the socket
closes; its workers do not: each ends with its run, as Dagster's own do. A worker that dies
before its run finished gets the run marked failed here, as the code server does for its own.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Mapping
from typing import Any

from evals_pipeline.dagster_private import RUN_WORKER_MODULES

PRELOAD = (
    "dagster",
    *RUN_WORKER_MODULES,
    "upath.core",
    "evals_pipeline.defs.definitions",
    "evals_pipeline.instance.event_storage",
    "evals_pipeline.storage.parquet",
    "evals_pipeline.reporting.summary",
    "evals_pipeline.reporting.writer",
)
"""What every worker would import before its run: Dagster, its run execution, its instance's
storages (the instance's state storage path type among them), our layers and the Parquet IO of
their records (pyarrow, which the code location itself no longer imports). The code location's
own module, which loads the suites, is imported per run."""

SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
"""Settings that keep the preloaded libraries from starting threads, so the server can fork:
numpy's BLAS pool and Arrow's allocator's background purger (a worker without them purges as
it allocates)."""

REAP_SECONDS = 1.0  # how often finished workers are collected while no request comes


def main(fd: int) -> int:
    """Serve launch requests on the socket `fd` until its other end closes."""
    channel = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is for the runs
    for module in PRELOAD:
        importlib.import_module(module)
    # What the imports made lives as long as every worker: out of the collector's sight, so a
    # worker's collections do not walk it (nor touch, and so copy, its pages).
    gc.freeze()
    if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
        _send(channel, {"error": "the preloaded modules started threads: cannot fork"})
        return 1
    loaded = _module_files()
    _send(channel, {"ready": os.getpid()})
    workers: dict[int, tuple[str, str]] = {}  # pid -> run id, instance ref
    # Requests come one at a time (the launcher waits for each answer), so nothing read ahead
    # into this buffer is left unseen by the select below.
    reader = channel.makefile("r", encoding="utf-8")
    while True:
        readable, _, _ = select.select([channel], [], [], REAP_SECONDS)
        _reap(workers)
        if not readable:
            continue
        line = reader.readline()
        if not line:
            return 0
        request = json.loads(line)
        if _changed(loaded):
            _send(channel, {"stale": True})
            return 0
        pid = os.fork()
        if pid == 0:  # the worker: returns from main, so the interpreter ends as usual
            reader.close()
            channel.close()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            return run_worker(request["run_id"], request["instance_ref"])
        workers[pid] = (request["run_id"], request["instance_ref"])
        _send(channel, {"pid": pid})


def run_worker(run_id: str, instance_ref: str) -> int:
    """Execute the run as `dagster api execute_run` does (events to the instance's log)."""
    from dagster import DagsterInstance, deserialize_value

    from evals_pipeline.dagster_private import (
        InstanceRef,
        capture_interrupts,
        execute_run_command_body,
    )

    with (
        capture_interrupts(),
        DagsterInstance.from_ref(deserialize_value(instance_ref, InstanceRef)) as instance,
    ):
        try:
            return execute_run_command_body(
                run_id, instance, lambda _: None, set_exit_code_on_failure=True
            )
        except Exception as exc:  # the code location did not load: the run cannot start
            run = instance.get_run_by_id(run_id)
            if run is not None and not run.is_finished:
                instance.report_engine_event(f"The run's worker failed to start: {exc}", run)
                instance.report_run_failed(run)
            raise


def _reap(workers: dict[int, tuple[str, str]]) -> None:
    """Collect finished workers; a run whose worker died before it finished is marked failed,
    with how it died."""
    while workers:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            workers.clear()
            return
        if pid == 0:
            return
        run_id, instance_ref = workers.pop(pid, ("", ""))
        if run_id and (os.WIFSIGNALED(status) or os.waitstatus_to_exitcode(status) != 0):
            _fail_unfinished(run_id, instance_ref, os.waitstatus_to_exitcode(status))


def _fail_unfinished(run_id: str, instance_ref: str, exit_code: int) -> None:
    from dagster import DagsterInstance, deserialize_value

    from evals_pipeline.dagster_private import InstanceRef, get_run_crash_explanation

    with DagsterInstance.from_ref(deserialize_value(instance_ref, InstanceRef)) as instance:
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return
        message = get_run_crash_explanation(
            prefix=f"Run execution process for {run_id}", exit_code=exit_code
        )
        instance.report_engine_event(message, run)
        instance.report_run_failed(run)


def _module_files() -> dict[str, int]:
    """Each imported module's file and its modification time."""
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            try:
                files[path] = os.stat(path).st_mtime_ns
            except OSError:
                continue
    return files


def _changed(loaded: Mapping[str, int]) -> bool:
    for path, mtime in loaded.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def _send(channel: socket.socket, message: Mapping[str, Any]) -> None:
    channel.sendall((json.dumps(message) + "\n").encode())


def server_argv(fd: int) -> list[str]:
    """The command that starts a server on the socket `fd`."""
    return [sys.executable, "-m", __name__, str(fd)]


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: the launcher's, with the preloaded libraries' threads off."""
    return {**env, **SINGLE_THREADED}


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
