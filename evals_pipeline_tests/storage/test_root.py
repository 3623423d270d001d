"""The storage root on a real S3-compatible server (moto's server mode on 127.0.0.1): what one
process writes and stores, another with its own local folder finds, and a local root keeps its
records' paths relative to it, so the folder can move."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from evals_pipeline.models.run import AgentRun
from evals_pipeline.results import ResultStore
from evals_pipeline.storage.root import SYNCED, StorageRoot, is_url
from evals_pipeline.workspaces.baseline import take_baseline
from evals_pipeline_tests.servers import S3


@pytest.fixture
def s3_env(s3_server: S3, monkeypatch: pytest.MonkeyPatch) -> Iterator[S3]:
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    yield s3_server


def trial_folder(root: StorageRoot) -> Path:
    """One trial's folder as the agent_runs step leaves it: stdout, a workspace whose `.git`
    points at a baseline repository beside it."""
    folder = root.local / "suite" / "agent_runs" / "run-1" / "agent" / "case" / "trial-0"
    workspace = folder / "workspace"
    workspace.mkdir(parents=True)
    (folder / "stdout.txt").write_text("hello\n")
    (workspace / "answer.py").write_text("print(42)\n")
    take_baseline(workspace, folder / ".workspace.state")  # the real one: a relative gitdir
    (workspace / "answer.py").write_text("print(43)\n")  # what the agent changed
    return folder


def agent_run(folder: Path) -> AgentRun:
    return AgentRun(
        case_key="case",
        agent="agent",
        stdout_path=str(folder / "stdout.txt"),
        workspace_path=str(folder / "workspace"),
        exit_code=0,
        start_ms=1,
        end_ms=2,
        result_key="k1",
    )


def test_urls_and_folders_are_told_apart() -> None:
    assert is_url("s3://bucket/prefix") and is_url("gs://bucket")
    assert not is_url("/data/evals") and not is_url("file:///data/evals")
    assert not is_url(".evals/storage")


def test_a_local_root_publishes_nothing(tmp_path: Path) -> None:
    root = StorageRoot(str(tmp_path / "storage"))
    folder = trial_folder(root)
    assert not root.remote and root.local == tmp_path / "storage"
    assert root.uri(folder) == str(folder)
    root.publish(folder)
    assert not (folder / SYNCED).exists()


def test_a_moved_local_root_still_resolves_its_records(tmp_path: Path) -> None:
    root = StorageRoot(str(tmp_path / "storage"))
    ResultStore.of_suite(root, "suite", "run-1").put("run", agent_run(trial_folder(root)))
    entry = json.loads((root.local / "suite/results/agent/case/run-k1.json").read_text())
    # The cache's entry names the record's file, relative to the root, as the record its paths.
    assert entry["record"] is None
    assert entry["record_path"].startswith("suite/results/agent/case/record-")
    stored = json.loads((root.local / entry["record_path"]).read_text())
    assert stored["stdout_path"] == "suite/agent_runs/run-1/agent/case/trial-0/stdout.txt"

    shutil.move(tmp_path / "storage", tmp_path / "moved")
    found = ResultStore.of_suite(StorageRoot(str(tmp_path / "moved")), "suite").run(
        "case", "agent", "k1"
    )

    assert found is not None and found.stdout_path is not None
    assert Path(found.stdout_path).read_text() == "hello\n"
    assert found.workspace_path == str(tmp_path / "moved" / Path(stored["workspace_path"]))


def test_a_result_of_the_previous_format_still_loads(tmp_path: Path, s3_env: S3) -> None:
    """A format-1 envelope, as stored before paths were relative: its record unversioned, its
    paths storage URIs. Another process reads it, its paths in its own mirror."""
    writer = StorageRoot(s3_env.url("previous"), cache=tmp_path / "writer")
    folder = trial_folder(writer)
    writer.publish(folder)
    trial = f"{writer.url}/suite/agent_runs/run-1/agent/case/trial-0"
    previous = {
        "format_version": 1,
        "key": "k1",
        "run_id": "run-1",
        "stored_ms": 5,
        "record": {
            "case_key": "case",
            "agent": "agent",
            "trial": 0,
            "stdout_path": f"{trial}/stdout.txt",
            "workspace_path": f"{trial}/workspace",
            "side_files": {"transcript": f"{trial}/stdout.txt"},
            "exit_code": 0,
            "start_ms": 1,
            "end_ms": 2,
            "result_key": "k1",
        },
    }
    assert writer.fs is not None
    with writer.fs.open_output_stream(
        f"{s3_env.bucket}/previous/suite/results/agent/case/run-k1.json"
    ) as out:
        out.write(json.dumps(previous).encode())
    reader = StorageRoot(s3_env.url("previous"), cache=tmp_path / "reader")

    found = ResultStore.of_suite(reader, "suite").run("case", "agent", "k1")

    assert found is not None and found.reused is not None and found.reused.stored_ms == 5
    assert found.format_version == 1  # upgraded from the unversioned record
    mirrored = reader.local / "suite/agent_runs/run-1/agent/case/trial-0"
    assert found.stdout_path == str(mirrored / "stdout.txt")
    assert found.side_files == {"transcript": str(mirrored / "stdout.txt")}
    assert Path(found.stdout_path).read_text() == "hello\n"


def test_a_stored_result_is_found_by_another_process_with_its_own_folder(
    tmp_path: Path, s3_env: S3
) -> None:
    writer = StorageRoot(s3_env.url("stored"), cache=tmp_path / "writer")
    reader = StorageRoot(s3_env.url("stored"), cache=tmp_path / "reader")
    run = agent_run(trial_folder(writer))

    ResultStore.of_suite(writer, "suite", "run-1").put("run", run)

    # In the store: the entry names the record's file, and the record names paths, relative
    # to the root, never the writer's folder.
    assert writer.fs is not None
    entry = writer.fs.open_input_stream(
        f"{s3_env.bucket}/stored/suite/results/agent/case/run-k1.json"
    ).read()
    record_path = json.loads(entry)["record_path"]
    assert record_path.startswith("suite/results/agent/case/record-")
    stored = writer.fs.open_input_stream(f"{s3_env.bucket}/stored/{record_path}").read()
    assert b'"suite/agent_runs/run-1/agent/case/trial-0/stdout.txt"' in stored
    assert str(tmp_path).encode() not in entry + stored
    found = ResultStore.of_suite(reader, "suite").run("case", "agent", "k1")
    assert found is not None and found.reused is not None
    # In the reader's own folder, with its files fetched: the workspace with its baseline.
    assert found.stdout_path is not None and found.workspace_path is not None
    assert Path(found.stdout_path).read_text() == "hello\n"
    assert Path(found.stdout_path).is_relative_to(tmp_path / "reader")
    workspace = Path(found.workspace_path)
    assert (workspace / "answer.py").read_text() == "print(43)\n"
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=workspace, capture_output=True, text=True
    )
    assert status.returncode == 0 and "answer.py" in status.stdout, status.stderr


def test_a_folder_is_fetched_once_and_missing_files_say_so(tmp_path: Path, s3_env: S3) -> None:
    writer = StorageRoot(s3_env.url("once"), cache=tmp_path / "writer")
    reader = StorageRoot(s3_env.url("once"), cache=tmp_path / "reader")
    folder = trial_folder(writer)
    writer.publish(folder)
    assert (folder / SYNCED).exists()

    local = reader.local_path(writer.uri(folder))
    reader.fetch(local)
    (local / "stdout.txt").write_text("changed here\n")
    reader.fetch(local)  # already whole here: not fetched again
    assert (local / "stdout.txt").read_text() == "changed here\n"
    assert not reader.fetch_file(reader.local / "nothing" / "here.json")
    reader.fetch(reader.local / "no" / "folder")  # nothing published: nothing made
    assert not (reader.local / "no").exists()


def test_pull_mirrors_only_the_named_files(tmp_path: Path, s3_env: S3) -> None:
    writer = StorageRoot(s3_env.url("reports"), cache=tmp_path / "writer")
    for run in ("a", "b"):
        report = writer.local / "suite" / "eval_report" / run
        report.mkdir(parents=True)
        (report / "report.json").write_text(run)
        (report / "report.html").write_text("<html>")
        writer.publish(report)
    reader = StorageRoot(s3_env.url("reports"), cache=tmp_path / "reader")

    reader.pull("suite/eval_report", {"report.json"})

    assert sorted(p.relative_to(reader.local).as_posix() for p in reader.local.rglob("*.*")) == [
        "suite/eval_report/a/report.json",
        "suite/eval_report/b/report.json",
    ]


def test_credentials_come_from_the_environment_not_the_url(tmp_path: Path, s3_env: S3) -> None:
    root = StorageRoot(s3_env.url("env"), cache=tmp_path)
    assert root.url == "s3://evals/env"
    assert isinstance(root.fs, pafs.S3FileSystem)
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in root.url
