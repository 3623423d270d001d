"""The shipped run launcher: runs launched on a real instance, through a real code server, start
in workers forked from the warm server; a run can be terminated, a worker killed outright fails
its run, and a server whose modules changed on disk hands over to a new one."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import dagster as dg
import pytest
from dagster._core.launcher import WorkerStatus
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import PythonFileTarget

from evals_pipeline.instance.local import local_instance
from evals_pipeline.instance.run_launcher import WORKER_TAG, WarmRunLauncher
from evals_pipeline.reaping.proc_table import read_stat

LOCATION = "launcher_test"

CODE = """
import os
import time
from pathlib import Path

import dagster as dg

MARKS = Path({marks!r})


@dg.op
def note() -> None:
    (MARKS / f"ran-{{os.getpid()}}").write_text(str(os.getppid()))


@dg.op
def wait() -> None:
    (MARKS / "waiting").write_text(str(os.getpid()))
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.05)


@dg.job(executor_def=dg.in_process_executor)
def quick() -> None:
    note()


@dg.job(executor_def=dg.in_process_executor)
def held() -> None:
    wait()


defs = dg.Definitions(jobs=[quick, held])
"""


class Launches:
    """A home with the shipped settings, a code location served by a real code server, and runs
    launched on it as the run queue launches them."""

    def __init__(self, instance: dg.DagsterInstance, code: Path, marks: Path) -> None:
        self.instance = instance
        self.marks = marks
        target = PythonFileTarget(
            python_file=str(code),
            attribute=None,
            working_directory=str(code.parent),
            location_name=LOCATION,
        )
        self.process_context = WorkspaceProcessContext(instance, target)
        self.module = _load(code)

    @property
    def launcher(self) -> WarmRunLauncher:
        launcher = self.instance.run_launcher
        assert isinstance(launcher, WarmRunLauncher)
        return launcher

    def launch(self, job: str, tags: dict[str, str] | None = None) -> str:
        workspace = self.process_context.create_request_context()
        location = workspace.get_code_location(LOCATION)
        [repository] = location.get_repositories().values()
        remote = repository.get_full_job(job)
        run = self.instance.create_run_for_job(
            job_def=self.module.defs.resolve_job_def(job),
            remote_job_origin=remote.get_remote_origin(),
            job_code_origin=remote.get_python_origin(),
            tags=tags,
        )
        self.instance.launch_run(run.run_id, workspace)
        return run.run_id

    def finished(self, run_id: str, timeout: float = 120) -> dg.DagsterRun:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = self.instance.get_run_by_id(run_id)
            assert run is not None
            if run.is_finished:
                return run
            time.sleep(0.1)
        raise AssertionError(f"run {run_id} did not finish in {timeout} s")

    def waiting_worker(self, timeout: float = 120) -> int:
        """The pid of the `held` run's worker, once its op is waiting."""
        mark = self.marks / "waiting"
        deadline = time.monotonic() + timeout
        while not mark.exists():
            assert time.monotonic() < deadline, "the held run never started its op"
            time.sleep(0.05)
        time.sleep(0.1)  # the file is written; let its text land
        return int(mark.read_text())


def _load(code: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("launcher_test_location", code)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def launches(tmp_path: Path) -> Iterator[Launches]:
    marks = tmp_path / "marks"
    marks.mkdir()
    code = tmp_path / "location.py"
    code.write_text(CODE.format(marks=str(marks)))
    instance = local_instance(tmp_path / "home")
    launches = Launches(instance, code, marks)
    try:
        yield launches
    finally:
        launches.process_context.__exit__(None, None, None)
        instance.dispose()


def test_a_run_starts_in_a_worker_forked_from_the_warm_server(launches: Launches) -> None:
    first = launches.launch("quick")
    assert launches.finished(first).status == dg.DagsterRunStatus.SUCCESS
    server = launches.launcher._server
    assert server is not None and server.alive()
    second = launches.launch("quick")
    assert launches.finished(second).status == dg.DagsterRunStatus.SUCCESS
    assert launches.launcher._server is server  # one server for every run

    for run_id in (first, second):
        run = launches.instance.get_run_by_id(run_id)
        assert run is not None
        host, pid, _ = run.tags[WORKER_TAG].rsplit(":", 2)
        assert host == socket.gethostname()
        # The op ran in the tagged worker, a child of the server (not of a code server).
        assert (launches.marks / f"ran-{pid}").read_text() == str(server.process.pid)
        assert "dagster/grpc_info" not in run.tags  # no code server was asked to launch it


def test_a_terminated_run_is_canceled_and_its_worker_ends(launches: Launches) -> None:
    run_id = launches.launch("held")
    pid = launches.waiting_worker()
    run = launches.instance.get_run_by_id(run_id)
    assert run is not None
    assert launches.launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING
    assert launches.instance.run_launcher.terminate(run_id)
    assert launches.finished(run_id).status == dg.DagsterRunStatus.CANCELED
    deadline = time.monotonic() + 30
    while (stat := read_stat(pid)) is not None and stat.running:
        assert time.monotonic() < deadline, "the canceled run's worker did not end"
        time.sleep(0.1)


def test_a_worker_killed_outright_fails_its_run(launches: Launches) -> None:
    run_id = launches.launch("held")
    os.kill(launches.waiting_worker(), signal.SIGKILL)
    run = launches.finished(run_id, timeout=60)  # the server reaps it and fails the run
    assert run.status == dg.DagsterRunStatus.FAILURE
    messages = [
        e.message
        for e in launches.instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    ]
    assert any("was terminated by signal 9" in (m or "") for m in messages), messages
    assert launches.launcher.check_run_worker_health(run).status == WorkerStatus.FAILED


def test_a_server_whose_modules_changed_hands_over_to_a_new_one(
    launches: Launches, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module the server imports at start (site imports sitecustomize from the path).
    extra = tmp_path / "site"
    extra.mkdir()
    (extra / "sitecustomize.py").write_text("")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(extra), os.environ.get("PYTHONPATH", "")])
    )
    first = launches.launch("quick")
    assert launches.finished(first).status == dg.DagsterRunStatus.SUCCESS
    server = launches.launcher._server
    assert server is not None
    stat = (extra / "sitecustomize.py").stat()
    os.utime(extra / "sitecustomize.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    second = launches.launch("quick")
    assert launches.finished(second).status == dg.DagsterRunStatus.SUCCESS
    assert launches.launcher._server is not server
    assert server.process.poll() == 0  # the stale one ended by itself
