"""The shipped instance's run launcher: Dagster's, with each run's worker forked from a warm
process (warm_workers.py) rather than spawned afresh by the code server, so a run launched from
the UI, a backfill, a sensor or a schedule starts ~0.3 s after its launch, not after 3-4 s of
imports.

It forks only for a code location that runs in this Python (the `dagster dev` set-up, where the
code server is a child of the same environment); any other location, or a fork server that
cannot start, gets Dagster's own launch through its code server. Terminating a run interrupts
its worker as Dagster's code server does (SIGINT), and run monitoring asks whether the worker
still lives (docs/deployment.md, "Run workers")."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagster import DagsterRun, DefaultRunLauncher, serialize_value

from evals_pipeline.dagster_private import (
    DAEMON_MAIN_MODULES,
    CheckRunHealthResult,
    ConfigurableClassData,
    LaunchRunContext,
    WorkerStatus,
)
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.instance.warm_workers import server_argv, server_env
from evals_pipeline.reaping.proc_table import read_stat

WORKER_TAG = "evals/run_worker"
"""`<host>:<pid>:<start>` of a forked run's worker (its start time tells a reused pid apart)."""

START_TIMEOUT_SECONDS = 180.0  # the server imports Dagster and our layers before it answers
ANSWER_TIMEOUT_SECONDS = 30.0

log = logging.getLogger(__name__)


class WorkerServerError(EvalsPipelineError):
    """The fork server could not start a worker."""


class WarmRunLauncher(DefaultRunLauncher):
    """Dagster's default run launcher, forking each run's worker from a warm process."""

    def __init__(self, inst_data: ConfigurableClassData | None = None) -> None:
        super().__init__(inst_data=inst_data)
        self._lock = threading.Lock()
        self._server: _ForkServer | None = None

    def register_instance(self, instance: Any) -> None:
        super().register_instance(instance)
        if in_daemon():  # the daemon launches the runs: have the server ready for the first
            threading.Thread(target=self._warm_up, name="run-worker-server", daemon=True).start()

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        if not _runs_here(run):
            super().launch_run(context)
            return
        try:
            worker = self._start_worker(run.run_id)
        except WorkerServerError as exc:
            log.warning("run %s: %s; launching it through the code server", run.run_id, exc)
            super().launch_run(context)
            return
        self._instance.add_run_tags(run.run_id, {WORKER_TAG: worker})
        self._run_ids.add(run.run_id)

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        worker = _Worker.of(run) if run else None
        if run is None or worker is None:
            return super().terminate(run_id)
        if run.is_finished:
            return False
        self._instance.report_run_canceling(run)
        if not worker.alive():
            return False
        os.kill(worker.pid, signal.SIGINT)  # the worker's interrupt, as the code server sends
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        worker = _Worker.of(run)
        if worker is None or worker.host != socket.gethostname():
            # Launched through the code server (which fails a run whose worker died) or elsewhere.
            return CheckRunHealthResult(WorkerStatus.RUNNING, "not a worker forked on this host")
        if worker.alive():
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"the run's worker (pid {worker.pid}) ended before the run did"
        )

    def dispose(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None
        super().dispose()

    def _warm_up(self) -> None:
        try:
            with self._lock:
                self._ready_server()
        except WorkerServerError as exc:
            log.warning("%s; runs will be launched through the code server", exc)

    def _start_worker(self, run_id: str) -> str:
        request = {"run_id": run_id, "instance_ref": serialize_value(self._instance.get_ref())}
        with self._lock:
            for _ in range(2):  # a stale server hands over to a new one once
                server = self._ready_server()
                answer = server.ask(request)
                if "pid" in answer:
                    return _Worker.started(int(answer["pid"])).tag()
                server.close()
                self._server = None
                if not answer.get("stale"):
                    raise WorkerServerError(str(answer.get("error", answer)))
        raise WorkerServerError("the fork server went stale twice in a row")

    def _ready_server(self) -> _ForkServer:
        if self._server is None or not self._server.alive():
            if self._server is not None:
                self._server.close()
            self._server = _ForkServer.start()
        return self._server


class _ForkServer:
    """A running warm_workers server and our end of its socket."""

    def __init__(self, process: subprocess.Popen[bytes], channel: socket.socket) -> None:
        self.process = process
        self.channel = channel
        self.reader = channel.makefile("r", encoding="utf-8")

    @classmethod
    def start(cls) -> _ForkServer:
        ours, theirs = socket.socketpair()
        try:
            process = subprocess.Popen(
                server_argv(theirs.fileno()),
                pass_fds=(theirs.fileno(),),
                env=server_env(os.environ),
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            ours.close()
            raise WorkerServerError(f"cannot start the fork server: {exc}") from exc
        finally:
            theirs.close()
        server = cls(process, ours)
        ready = server.answer(START_TIMEOUT_SECONDS)
        if "ready" not in ready:
            server.close()
            raise WorkerServerError(f"the fork server did not start: {ready.get('error', ready)}")
        return server

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        try:
            self.channel.sendall((json.dumps(request) + "\n").encode())
        except OSError as exc:
            raise WorkerServerError(f"the fork server is gone: {exc}") from exc
        return self.answer(ANSWER_TIMEOUT_SECONDS)

    def answer(self, timeout: float) -> dict[str, Any]:
        self.channel.settimeout(timeout)
        try:
            line = self.reader.readline()
        except OSError as exc:  # a timeout among them
            raise WorkerServerError(f"no answer from the fork server: {exc}") from exc
        if not line:
            raise WorkerServerError(f"the fork server exited ({self.process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Closing our end ends the server (not its workers); it is reaped here."""
        self.reader.close()
        self.channel.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Worker:
    """A forked worker as its run's tag names it."""

    def __init__(self, host: str, pid: int, start: str) -> None:
        self.host, self.pid, self.start = host, pid, start

    @classmethod
    def started(cls, pid: int) -> _Worker:
        return cls(socket.gethostname(), pid, _start_time(pid) or "")

    @classmethod
    def of(cls, run: DagsterRun) -> _Worker | None:
        tag = run.tags.get(WORKER_TAG)
        if not tag:
            return None
        host, pid, start = tag.rsplit(":", 2)
        return cls(host, int(pid), start)

    def tag(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    def alive(self) -> bool:
        """Whether the worker runs yet: its pid lives and started when the worker did."""
        return _start_time(self.pid) == self.start


def _start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), None if it is gone or a zombie."""
    stat = read_stat(pid)
    return str(stat.start_ticks) if stat is not None and stat.running else None


def _runs_here(run: DagsterRun) -> bool:
    """Whether the run's code location runs in this Python, so a worker forked here loads it
    as its code server would."""
    origin = run.job_code_origin
    if origin is None or not sys.platform.startswith("linux"):
        return False
    executable = origin.repository_origin.executable_path
    try:
        return os.path.samefile(executable, sys.executable)
    except OSError:
        return False


def in_daemon() -> bool:
    """Whether this process is Dagster's daemon (`dagster-daemon run`, or `dagster dev`'s
    daemon module run as `python -m`), the one that launches queued runs."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return Path(sys.argv[0]).name == "dagster-daemon" or (
        spec is not None and spec.name in DAEMON_MAIN_MODULES
    )
