"""Durability and the result cache through the real `evals-pipeline run`: a run killed with
SIGKILL half-way resumes with only the missing cases, and an unchanged case is never run twice."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.io_manager import latest_materializations
from evals_pipeline.defs.partitions import partition_key
from evals_pipeline.models.session import Session
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.storage.records import read_records
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline_tests.test_cli import cli, printed_report_folder, write

# Appends its prompt to log/invocations.log beside it, sleeps, then answers.
AGENT = """\
import os, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
here = os.path.dirname(os.path.abspath(__file__))
prompt = open(args["--prompt-file"]).read().strip()
with open(os.path.join(here, "log", "invocations.log"), "a") as log:
    log.write(f"{args['--name']} {prompt}\\n")
time.sleep(float(args["--sleep"]))
open(args["--output"], "w").write(f"done {prompt}")
"""


@pytest.fixture(autouse=True)
def _agents_may_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' log folder is writable in the sandbox (the suite's own folder is not)."""
    (tmp_path / "project" / "log").mkdir(parents=True)
    monkeypatch.setenv(WRITABLE_VAR, str(tmp_path / "project" / "log"))


def suite(folder: Path, tests: list[str], *, agents: dict[str, str], sleep: float) -> Path:
    """A suite of `tests` (id = input) over cli `agents` ({name: model flag})."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(AGENT)
    targets = "".join(
        f"  - name: {name}\n    provider: cli\n    command: python3 {{EVAL_DIR}}/agent.py "
        f"--name {name} --model {model} --sleep {sleep} --prompt-file {{PROMPT_FILE}} "
        "--output {OUTPUT_FILE}\n"
        for name, model in agents.items()
    )
    cases = "".join(
        f"  - id: {test}\n    input: {test}\n    assertions: [{{type: contains, value: done}}]\n"
        for test in tests
    )
    text = (
        f"name: resume\nexecution:\n  workers: 3\n  targets: [{', '.join(agents)}]\n"
        f"targets:\n{targets}tests:\n{cases}"
    )
    return write(folder, "resume.eval.yaml", text)


def invocations(folder: Path, since: int = 0) -> list[str]:
    log = folder / "log" / "invocations.log"
    return log.read_text().splitlines()[since:] if log.exists() else []


def stored_runs(home: Path) -> set[str]:
    """The (agent/case) pairs with a stored agent run."""
    root = home / "storage" / "resume" / "results"
    return {f"{p.parent.parent.name}/{p.parent.name}" for p in root.glob("*/*/run-*.json")}


def agent_processes(folder: Path) -> list[int]:
    """The pids of the live processes that run `folder`'s agent.py, the sandbox's wrapping
    included, as this process sees them (an agent's own getpid() is its PID namespace's)."""
    script = str(folder / "agent.py").encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            running = entry.name.isdigit() and script in (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if running:  # a zombie's cmdline is empty
            found.append(int(entry.name))
    return found


def test_a_run_killed_half_way_resumes_with_only_the_missing_cases(tmp_path: Path) -> None:
    project = tmp_path / "project"
    tests = [f"case-{n:02d}" for n in range(30)]
    path = suite(project, tests, agents={"slow": "m-1"}, sleep=1.0)
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster")}
    env["EVALS_PIPELINE_STORAGE"] = str(tmp_path / "storage")
    first = subprocess.Popen(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(path)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 180
    # Killed while agents run: a worker makes each run's session and grade as the run ends, so
    # at times every worker is between two agents.
    while (len(stored_runs(tmp_path)) < 12 or not agent_processes(project)) and (
        time.monotonic() < deadline
    ):
        assert first.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    assert agent_processes(project), "no agent was running when the run was killed"
    first.send_signal(signal.SIGKILL)
    first.wait()
    deadline = time.monotonic() + 30
    while agent_processes(project) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not agent_processes(project), "agents of the killed run are still running"
    survived = stored_runs(tmp_path)
    assert 12 <= len(survived) < 30
    started = len(invocations(project))

    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    rerun = {line.split()[1] for line in invocations(project, started)}
    assert rerun == {t for t in tests if f"slow/{t}" not in survived}
    rows = [
        json.loads(line)
        for line in (printed_report_folder(done.stdout) / "results.jsonl").read_text().splitlines()
    ]
    assert sorted(r["test_id"] for r in rows) == tests  # each case exactly once
    assert {r["score"] for r in rows} == {1.0}
    assert re.search(rf"\breused {len(survived)}\b", done.stderr), done.explain()
    assert "failed: the process that ran it died" in done.stderr, done.explain()


def test_unchanged_cases_are_reused_and_changed_ones_re_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    tests = ["alpha", "beta", "gamma"]
    agents = {"one": "m-1", "two": "m-1"}
    path = suite(project, tests, agents=agents, sleep=0)

    def ran_since(seen: int) -> list[str]:
        return sorted(invocations(project, seen))

    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    assert len(invocations(project)) == 6
    assert "results reused" not in done.stdout, done.explain()

    seen = len(invocations(project))
    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0 and ran_since(seen) == [], done.explain()
    assert "6 of 6 results reused from earlier runs" in done.stdout, done.explain()
    instance = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    beta = str(partition_key("beta", "two"))
    grade = latest_materializations(instance, dg.AssetKey(["resume", "grades"]), [beta])[beta]
    assert grade.asset_materialization is not None
    assert grade.asset_materialization.metadata["reused"].value is True

    seen = len(invocations(project))
    path.write_text(path.read_text().replace("input: beta", "input: beta-changed"))
    assert cli("run", str(path), home=tmp_path).code == 0
    assert ran_since(seen) == ["one beta-changed", "two beta-changed"]

    seen = len(invocations(project))
    path.write_text(path.read_text().replace("--name two --model m-1", "--name two --model m-2"))
    assert cli("run", str(path), home=tmp_path).code == 0
    assert ran_since(seen) == ["two alpha", "two beta-changed", "two gamma"]

    seen = len(invocations(project))
    assert cli("run", str(path), "--no-cache", home=tmp_path).code == 0
    assert len(ran_since(seen)) == 6


def test_a_moved_storage_root_reuses_its_results_with_their_files(tmp_path: Path) -> None:
    """Stored records keep paths relative to the storage root: after the root's folder moves,
    the results are reused and the reused sessions name their files where they are now."""
    project = tmp_path / "project"
    path = suite(project, ["alpha", "beta"], agents={"one": "m-1"}, sleep=0)
    first, moved = tmp_path / "first", tmp_path / "moved"
    first.mkdir()
    moved.mkdir()
    assert cli("run", str(path), home=first).code == 0

    shutil.move(first / "storage", moved / "storage")
    seen = len(invocations(project))
    done = cli("run", str(path), home=moved)

    assert done.code == 0 and invocations(project, seen) == [], done.explain()
    assert "2 of 2 results reused from earlier runs" in done.stdout, done.explain()
    root = StorageRoot(str(moved / "storage"))
    tables = sorted((root.local / "resume" / "sessions").glob("*/records.parquet"))
    newest = max(tables, key=lambda p: p.stat().st_mtime)
    sessions = [
        Session.model_validate_json(text, context=root.record_context())
        for _, text in read_records(newest)
    ]
    assert len(sessions) == 2 and all(s.reused is not None for s in sessions)
    for session in sessions:
        assert Path(session.messages_path).is_relative_to(root.local), session.messages_path
        assert Path(session.messages_path).is_file(), session.messages_path
