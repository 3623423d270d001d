"""A run terminated as the Dagster UI terminates it (the run coordinator's `cancel_run`, then the
launcher's `terminate`), on our launcher and on Dagster's, stops its agents as Ctrl-C does: the
run ends CANCELED within seconds, no agent starts after the termination, those in flight are
ended with their children rather than left to finish, the finished runs are stored, and a new
run of the same partitions reuses them and runs the rest."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.instance.local import SETTINGS_FILE, local_instance, shipped_settings
from evals_pipeline.instance.run_launcher import WORKER_TAG, WarmRunLauncher
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.suites import load_suite, resolved_case_keys
from evals_pipeline_tests.instance.test_run_launcher import Launches
from evals_pipeline_tests.test_cli import write
from evals_pipeline_tests.test_interrupts import agent_processes

TESTS = [f"case-{n:02d}" for n in range(20)]
WORKERS = 2
SUITE = "terminated"

# Logs its prompt to log/starts.log beside it, sleeps with a child of its own (in its group), and
# logs its prompt to log/ends.log once both have slept.
AGENT = """\
import os, subprocess, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
if "--child" in args:
    time.sleep(float(args["--sleep"]))
    sys.exit(0)
here = os.path.dirname(os.path.abspath(__file__))
prompt = open(args["--prompt-file"]).read().strip()
with open(os.path.join(here, "log", "starts.log"), "a") as log:
    log.write(prompt + "\\n")
child = subprocess.Popen([sys.executable, __file__, "--child", "1", "--sleep", args["--sleep"]])
time.sleep(float(args["--sleep"]))
child.wait()
open(args["--output"], "w").write("done " + prompt)
with open(os.path.join(here, "log", "ends.log"), "a") as log:
    log.write(prompt + "\\n")
"""

# The code location: the suite's jobs as `evals-pipeline run` runs them (suite_run.py).
CODE = """
from evals_pipeline.defs.suite_run import run_definitions
from evals_pipeline.suites import load_suite

defs = run_definitions(load_suite({suite!r}), {storage!r})
"""


class SuiteLaunches(Launches):
    """The suite's `layers` job launched over all its partitions, as a backfill launches it."""

    def __init__(self, instance: dg.DagsterInstance, code: Path, suite: Path) -> None:
        super().__init__(instance, code, code.parent)
        self.warm = isinstance(instance.run_launcher, WarmRunLauncher)
        loaded = load_suite(suite)
        self.order = register_cases(instance, loaded.slug, resolved_case_keys(loaded))

    def launch(self, job: str = "layers", tags: dict[str, str] | None = None) -> str:
        return super().launch(
            job,
            {
                "dagster/asset_partition_range_start": str(partition_key(self.order[0], "slow")),
                "dagster/asset_partition_range_end": str(partition_key(self.order[-1], "slow")),
                **(tags or {}),
            },
        )


GRADER = """\
import json, os, subprocess, sys, time
payload = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "log", "grader-starts.log"), "a") as log:
    log.write(payload["test_id"] + "\\n")
child = subprocess.Popen([sys.executable, os.path.join(here, "agent.py"), "--child", "1",
                          "--sleep", "30"])
time.sleep(30)
child.wait()
with open(os.path.join(here, "log", "grader-ends.log"), "a") as log:
    log.write(payload["test_id"] + "\\n")
print(json.dumps({"score": 1.0}))
"""


@contextmanager
def suite_launches(
    tmp_path: Path, *, launcher: str, sleep: float, grader: bool = False
) -> Iterator[SuiteLaunches]:
    """The suite's location on an instance with the shipped settings: our launcher (`warm`), or
    Dagster's, which launches through the code server (`default`). Its agent sleeps `sleep`
    seconds; with `grader`, a code grader that sleeps 30 s grades every case too."""
    project = tmp_path / "project"
    (project / "log").mkdir(parents=True)
    (project / "agent.py").write_text(AGENT)
    (project / "grader.py").write_text(GRADER)
    check = "[{type: contains, value: done}"
    check += f", {{type: code-grader, command: [{sys.executable}, grader.py]}}]" if grader else "]"
    cases = "".join(f"  - id: {t}\n    input: {t}\n    assertions: {check}\n" for t in TESTS)
    suite = write(
        project,
        f"{SUITE}.eval.yaml",
        f"name: {SUITE}\nexecution:\n  workers: {WORKERS}\n  targets: [slow]\n"
        "targets:\n  - name: slow\n    provider: cli\n    command: python3 {EVAL_DIR}/agent.py "
        f"--sleep {sleep} --prompt-file {{PROMPT_FILE}} --output {{OUTPUT_FILE}}\n"
        f"tests:\n{cases}",
    )
    code = tmp_path / "location.py"
    code.write_text(CODE.format(suite=str(suite), storage=str(tmp_path / "storage")))
    home = tmp_path / "home"
    if launcher == "default":
        home.mkdir()
        settings = shipped_settings().replace(
            "module: evals_pipeline.instance.run_launcher\n  class: WarmRunLauncher",
            "module: dagster._core.launcher\n  class: DefaultRunLauncher",
        )
        assert "DefaultRunLauncher" in settings
        (home / SETTINGS_FILE).write_text(settings)
    instance = local_instance(home)
    launches = SuiteLaunches(instance, code, suite)
    try:
        yield launches
    finally:
        launches.process_context.__exit__(None, None, None)
        instance.dispose()


@pytest.fixture(params=["warm", "default"])
def launches(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SuiteLaunches]:
    # The code server and the workers see the log folder writable.
    monkeypatch.setenv(WRITABLE_VAR, str(tmp_path / "project" / "log"))
    with suite_launches(tmp_path, launcher=request.param, sleep=1.5) as launches:
        yield launches


def logged(project: Path, name: str) -> list[str]:
    log = project / "log" / name
    return log.read_text().splitlines() if log.exists() else []


def stored_runs(storage: Path) -> int:
    return len(list((storage / SUITE / "results").glob("*/*/run-*.json")))


def test_a_run_terminated_as_the_ui_does_stops_its_agents_and_a_new_run_resumes(
    launches: SuiteLaunches, tmp_path: Path
) -> None:
    project, storage = tmp_path / "project", tmp_path / "storage"
    run_id = launches.launch()
    deadline = time.monotonic() + 180
    # Past four finished runs, the moment an agent starts: it has its 1.5 s still to sleep.
    while stored_runs(storage) < 4 or len(logged(project, "starts.log")) < 6:
        run = launches.instance.get_run_by_id(run_id)
        assert run is not None and not run.is_finished, "the run ended before it was terminated"
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.01)
    started = logged(project, "starts.log")
    while len(now := logged(project, "starts.log")) == len(started):
        time.sleep(0.01)
    launches.instance.run_coordinator.cancel_run(run_id)  # the UI's Terminate button
    terminated = time.monotonic()
    fresh = now[-1]

    run = launches.finished(run_id, timeout=10)
    assert run.status == dg.DagsterRunStatus.CANCELED
    assert (WORKER_TAG in run.tags) == launches.warm  # the launcher meant launched it
    while agent_processes(project):
        assert time.monotonic() - terminated < 10, "an agent or its child outlived the run"
        time.sleep(0.1)
    time.sleep(1)  # an agent started after the termination would show here
    after = logged(project, "starts.log")
    # The agents in flight were ended, not left to finish; nothing new started.
    assert fresh not in logged(project, "ends.log")
    assert len(after) <= len(now) + 1, (now, after)  # the other worker's, at the same instant
    done = stored_runs(storage)
    assert 4 <= done <= len(logged(project, "ends.log"))  # the stopped runs are not stored

    again = launches.launch()
    assert launches.finished(again, timeout=180).status == dg.DagsterRunStatus.SUCCESS
    every = logged(project, "starts.log")
    assert set(every) == set(TESTS)
    assert len(every) - len(after) == len(TESTS) - done  # the finished ones were reused
    assert stored_runs(storage) == len(TESTS)


def test_a_run_terminated_while_it_grades_ends_its_graders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    monkeypatch.setenv(WRITABLE_VAR, str(project / "log"))
    with suite_launches(tmp_path, launcher="warm", sleep=0.2, grader=True) as launches:
        run_id = launches.launch()
        deadline = time.monotonic() + 180
        # Graders in flight: each case is graded in the agents' step as its agent ends.
        while not logged(project, "grader-starts.log"):
            run = launches.instance.get_run_by_id(run_id)
            assert run is not None and not run.is_finished, "the run ended before it graded"
            assert time.monotonic() < deadline, "the agents never finished"
            time.sleep(0.01)
        assert logged(project, "grader-starts.log") and not logged(project, "grader-ends.log")
        launches.instance.run_coordinator.cancel_run(run_id)
        terminated = time.monotonic()
        started = logged(project, "grader-starts.log")
        run = launches.finished(run_id, timeout=10)
        assert run.status == dg.DagsterRunStatus.CANCELED
        while agent_processes(project):
            assert time.monotonic() - terminated < 10, "a grader or its child outlived the run"
            time.sleep(0.1)
        time.sleep(1)  # a grader started after the termination would show here
        assert not logged(project, "grader-ends.log")  # ended, not left to finish
        assert len(logged(project, "grader-starts.log")) <= len(started) + 1
