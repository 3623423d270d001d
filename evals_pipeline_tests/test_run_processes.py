"""No agent or grader process outlives its run: `evals-pipeline run` as a real subprocess, with
agents and graders that leave `setsid` children behind, and a run SIGKILLed while agents are in
flight (its leftovers swept and its Dagster run marked failed by the next start)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.instance.local import local_instance
from evals_pipeline.instance.run_recovery import RUNNER_PID_TAG
from evals_pipeline.reaping.ledger import STATE_DIR_VAR
from evals_pipeline.reaping.owner import OWNER_VAR
from evals_pipeline.reaping.proc_table import all_pids, environ_value
from evals_pipeline.sandbox.detection import SANDBOX_VAR
from evals_pipeline_tests.test_cli import MIXED_SUITE, cli, write
from evals_pipeline_tests.test_process import _alive, _wait_for_pids

# Each escapee's pid goes to PIDS; `hangs` never ends, `leaves` answers and leaves its escapee
# holding the stderr pipe (a plain communicate() would wait for it for 600 s).
AGENT = """\
case "$1" in
  hangs) setsid sleep 600 & echo $! >> PIDS; sleep 600 ;;
  leaves) setsid sleep 600 & echo $! >> PIDS; echo hello > "$2" ;;
  *) echo hello > "$2" ;;
esac
"""
GRADER = "setsid sleep 600 & echo $! >> PIDS; sleep 600\n"
ESCAPES_SUITE = """\
name: escapes
execution:
  targets: [escaper]
  workers: 2
targets:
  - name: escaper
    provider: cli
    command: bash agent.sh {EVAL_ID} {OUTPUT_FILE}
    timeout_seconds: 3
tests:
  - id: hangs
    input: Say hello.
    assertions: [{type: contains, value: hello}]
  - id: leaves
    input: Say hello.
    assertions: [{type: contains, value: hello}]
  - id: hung-grader
    input: Say hello.
    assertions:
      - {type: code-grader, command: [bash, grader.sh], timeout_seconds: 3}
  - id: answers
    input: Say hello.
    assertions: [{type: contains, value: hello}]
"""

# Two agents in flight, each with an escapee, when the runner is killed.
SLOW_AGENT = "setsid sleep 600 & echo $! >> PIDS; echo $$ >> PIDS; sleep 600\n"
SLOW_SUITE = """\
name: slow
execution:
  targets: [sleeper]
  workers: 2
targets:
  - name: sleeper
    provider: cli
    command: bash agent.sh
    timeout_seconds: 600
tests:
  - id: one
    input: Wait.
    assertions: []
  - id: two
    input: Wait.
    assertions: []
"""


@pytest.fixture(autouse=True)
def own_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs' child records go under the test's folder (the cli() helper passes os.environ).

    The sandbox is off: these agents write their escapees' pids outside their workspace, and
    only outside a PID namespace are those the host's pids. The sandboxed tree's end is
    test_sandbox.py's."""
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))
    monkeypatch.setenv(SANDBOX_VAR, "off")


def left_by_dead_runners(folder: Path) -> list[int]:
    """Live processes working under `folder` that a runner started (they carry a runner's
    marker), called once the runners that worked there ended (the folder keeps other tests'
    processes out)."""
    found = []
    for pid in all_pids():
        if environ_value(pid, OWNER_VAR.encode()) is None or not _alive(pid):
            continue
        with contextlib.suppress(OSError):
            if Path(os.readlink(f"/proc/{pid}/cwd")).is_relative_to(folder):
                found.append(pid)
    return found


def test_setsid_children_of_agents_and_graders_end_with_their_case(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    pids = tmp_path / "pids"
    write(suite, "agent.sh", AGENT.replace("PIDS", str(pids)))
    write(suite, "grader.sh", GRADER.replace("PIDS", str(pids)))
    path = write(suite, "escapes.eval.yaml", ESCAPES_SUITE)
    done = cli("run", str(path), "--output", str(tmp_path / "report"), home=tmp_path)
    assert done.code == 0, done.explain()
    lines = (tmp_path / "report" / "results.jsonl").read_text().splitlines()
    results = {row["test_id"]: row for row in map(json.loads, lines)}
    hung = results["hangs"]
    assert hung["execution_status"] != "ok" and "timed out after 3 s" in hung["error"]
    assert hung["duration_ms"] < (3 + 30) * 1000
    assert results["leaves"]["score"] == 1.0 and results["answers"]["score"] == 1.0
    grader = results["hung-grader"]["scores"][0]
    assert grader["verdict"] == "skip" and "timed out after 3 s" in grader["error"]
    escapees = [int(p) for p in pids.read_text().split()]
    assert len(escapees) == 3
    assert not any(_alive(pid) for pid in escapees)
    assert left_by_dead_runners(tmp_path) == []


def _wait_for_started_run(home: Path, suite: str, limit_seconds: float = 120) -> None:
    """Until the Dagster run of `suite` is in progress: `evals-pipeline run` starts its first
    run's agents before it makes the run."""
    with local_instance(home) as instance:  # made under the lock the runner makes it under
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            started = dg.RunsFilter(
                tags={"evals/suite": suite}, statuses=[dg.DagsterRunStatus.STARTED]
            )
            if instance.get_run_records(filters=started):
                return
            time.sleep(0.1)
    raise AssertionError(f"no run of {suite} started within {limit_seconds} s")


def test_a_killed_run_leaves_nothing_running_and_is_marked_failed_by_the_next(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    pids = tmp_path / "pids"
    write(suite, "agent.sh", SLOW_AGENT.replace("PIDS", str(pids)))
    path = write(suite, "slow.eval.yaml", SLOW_SUITE)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }
    runner = subprocess.Popen(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(path)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        in_flight = _wait_for_pids(pids, 4, limit_seconds=240)
        _wait_for_started_run(tmp_path / "dagster", "slow")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 10
    while (
        any(map(_alive, in_flight)) or left_by_dead_runners(tmp_path)
    ) and time.monotonic() < deadline:
        time.sleep(0.05)
    # The agents by their parent-death signal, the rest (escapees too) by the runner's guard.
    assert not any(map(_alive, in_flight))
    assert left_by_dead_runners(tmp_path) == []

    again = write(tmp_path / "next", "mini.eval.yaml", MIXED_SUITE)
    done = cli("run", str(again), home=tmp_path)
    assert done.code in (0, 1), done.explain()
    assert "marked run" in done.stderr, done.explain()

    instance = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    killed = instance.get_run_records(filters=dg.RunsFilter(tags={"evals/suite": "slow"}))
    assert len(killed) == 1
    assert killed[0].dagster_run.status == dg.DagsterRunStatus.FAILURE
    assert killed[0].dagster_run.tags[RUNNER_PID_TAG] == str(runner.pid)
    later = instance.get_run_records(filters=dg.RunsFilter(tags={"evals/suite": "mini"}))
    assert later and {r.dagster_run.status for r in later} == {dg.DagsterRunStatus.SUCCESS}
