"""Agent runs started before their step: the step takes them when they ran its cases and runs
its own otherwise; `evals-pipeline run` starts its first run's agents before the Dagster run
exists, and its sessions and grades steps take what those fed them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.cli.parser import build_parser
from evals_pipeline.layers import run_agents
from evals_pipeline.layers.agent_runs_ahead import AgentRunsAhead
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases
from evals_pipeline_tests.cli_agent_suite import write_cli_agent_suite
from evals_pipeline_tests.test_cli import cli

AGENT = """\
import json, sys, time
with open(sys.argv[sys.argv.index("--started") + 1], "a") as stamps:
    stamps.write(f"{time.time()}\\n")
json.dump({"output": [{"role": "assistant", "content": "done"}]},
          open(sys.argv[sys.argv.index("--out") + 1], "w"))
"""


@pytest.fixture(autouse=True)
def _agents_may_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder the agents stamp their starts in is writable in the sandbox."""
    (tmp_path / "stamps").mkdir()
    monkeypatch.setenv(WRITABLE_VAR, str(tmp_path / "stamps"))


def _suite(root: Path, tests: int = 4) -> Path:
    """A suite whose agents stamp their starts in `stamps/started.txt` beside `root`."""
    started = root.parent / "stamps" / "started.txt"
    return write_cli_agent_suite(root, AGENT, tests, arguments=f"--started {started}")


def _starts(tmp_path: Path) -> list[str]:
    return (tmp_path / "stamps" / "started.txt").read_text().split()


def _ahead(cases: list[ResolvedCase], folder: Path, heard: list[AgentRun]) -> AgentRunsAhead:
    def run(given: list[ResolvedCase]) -> list[AgentRun]:
        return run_agents(given, folder, workers=2, finished=heard.append)

    return AgentRunsAhead(lambda: cases, run)


def test_the_step_takes_the_runs_in_its_order(tmp_path: Path) -> None:
    cases = resolve_cases(load_suite(_suite(tmp_path / "suite")))
    heard: list[AgentRun] = []
    ahead = _ahead(cases, tmp_path / "runs", heard)
    step_order = list(reversed(cases))
    runs = ahead.take(step_order)
    ahead.close()
    assert runs is not None
    assert [(r.case_key, r.error) for r in runs] == [(c.case_key, None) for c in step_order]
    assert sorted(r.case_key for r in heard) == sorted(c.case_key for c in cases)
    assert len(_starts(tmp_path)) == len(cases)


def test_runs_started_for_other_cases_are_not_taken(tmp_path: Path) -> None:
    cases = resolve_cases(load_suite(_suite(tmp_path / "suite")))
    ahead = _ahead(cases[:2], tmp_path / "runs", [])
    assert ahead.take(cases) is None
    ahead.close()  # waits for the two started: none outlives the command
    assert len(_starts(tmp_path)) == 2


def test_cases_that_could_not_be_made_leave_the_step_its_own_runs(tmp_path: Path) -> None:
    def unloadable() -> list[ResolvedCase]:
        raise SuiteError([])

    ahead = AgentRunsAhead(unloadable, lambda cases: [])
    assert ahead.take([]) is None
    ahead.close()


def test_the_command_starts_its_agents_before_the_dagster_run_exists(tmp_path: Path) -> None:
    done = cli("run", str(_suite(tmp_path / "suite")), home=tmp_path)
    assert done.code == 0, done.explain()
    [folder] = (tmp_path / "storage" / "ahead" / "agent_runs").iterdir()
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        record = instance.get_run_record_by_id(folder.name)  # the run's own agents folder
        assert record is not None and record.dagster_run.is_success
        created = record.create_timestamp.timestamp()
        runs = instance.fetch_materializations(dg.AssetKey(["ahead", "agent_runs"]), limit=10)
        assert {r.run_id for r in runs.records} == {folder.name}
    starts = [float(s) for s in _starts(tmp_path)]
    assert len(starts) == 4 and min(starts) < created, (starts, created)


# `evals-pipeline run` in a child process, stopped when its first agent is about to start, with
# Dagster held back (its instance never comes): the libraries loaded by then are printed.
FIRST_AGENT = """
import os, sys, threading, time
from evals_pipeline.cli import main, run
from evals_pipeline.layers import agent_runs

first = threading.Lock()
def first_agent(*args, **kwargs):
    first.acquire()  # the first agent reports; another worker's waits for the exit
    print(sorted(m for m in ("dagster", "numpy", "pandas", "pyarrow") if m in sys.modules))
    sys.stdout.flush()
    os._exit(0)
def instance(say):
    time.sleep(60)
agent_runs.run_agent = first_agent
run._instance = instance
main(["run", sys.argv[1]])
"""


def test_the_first_agent_starts_before_the_heavy_libraries_load(tmp_path: Path) -> None:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster")}
    env["EVALS_PIPELINE_STORAGE"] = str(tmp_path / "storage")
    argv = [sys.executable, "-c", FIRST_AGENT, str(_suite(tmp_path / "suite"))]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.splitlines()[-1:]) == (0, ["[]"]), done.stderr


def test_the_sessions_step_takes_what_the_early_agents_fed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_enrichments: list[AgentRun]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.setenv("EVALS_PIPELINE_STORAGE", str(tmp_path / "storage"))
    args = build_parser().parse_args(["run", str(_suite(tmp_path / "suite"))])
    assert args.func(args) == 0  # in this process, as the command runs
    assert step_enrichments == []
