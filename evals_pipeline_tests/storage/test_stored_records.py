"""Stored records carry a format version and read their previous format (literal records, shaped
as they were stored before versions), and keep their paths relative to the storage root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.models.stored import StoredRecord
from evals_pipeline.results.store import STORE_FORMAT, Kind, ResultStore, StoredResult
from evals_pipeline.storage.record_reader import RecordReader
from evals_pipeline.storage.records import read_records, write_records
from evals_pipeline.storage.root import StorageRoot

TRIAL = "suite/agent_runs/run-1/agent/case/trial-0"

# Each record type as stored before format versions (format 0): no `format_version`, paths as
# this machine's absolute paths (`{root}` is the storage root's folder).
PREVIOUS: dict[type[StoredRecord], dict[str, Any]] = {
    AgentRun: {
        "case_key": "case",
        "agent": "agent",
        "stdout_path": "{root}/" + TRIAL + "/stdout.txt",
        "workspace_path": "{root}/" + TRIAL + "/workspace",
        "side_files": {"rollout": "{root}/" + TRIAL + "/rollout.jsonl"},
        "start_ms": 1,
        "end_ms": 2,
        "result_key": "k1",
    },
    Session: {
        "case_key": "case",
        "agent": "agent",
        "messages_path": "{root}/suite/sessions/run-1/agent/case/trial-0/messages.parquet",
        "events_path": "{root}/suite/sessions/run-1/agent/case/trial-0/events.parquet",
        "output": "42",
    },
    TrialGrade: {"trial": 0, "score": 1.0, "verdict": "pass", "execution_status": "ok"},
    CaseGrade: {
        "case_key": "case",
        "test_id": "case",
        "agent": "agent",
        "threshold": 0.8,
        "score": 1.0,
        "verdict": "pass",
        "execution_status": "ok",
        "trials": [{"trial": 0, "score": 1.0, "verdict": "pass", "execution_status": "ok"}],
    },
    CaseJudgment: {"case_key": "case", "test_id": "case", "agent": "agent", "trials": []},
    CasePairwise: {"case_key": "case", "pairs": []},
    EvalReport: {"suite": "suite", "created_ms": 3, "agents": []},
}


def previous(model: type[StoredRecord], root: Path) -> dict[str, Any]:
    return json.loads(json.dumps(PREVIOUS[model]).replace("{root}", str(root)))


@pytest.mark.parametrize("model", list(PREVIOUS), ids=lambda m: m.__name__)
def test_a_record_of_the_previous_format_reads_as_the_current_one(
    model: type[StoredRecord], tmp_path: Path
) -> None:
    root = StorageRoot(str(tmp_path))
    record = model.model_validate(previous(model, tmp_path), context=root.record_context())
    assert record.format_version == model.current_format()
    # Stored again, it is of the current format with its paths relative to the root.
    stored = json.loads(record.model_dump_json(context=root.record_context()))
    assert stored["format_version"] == model.current_format()
    assert str(tmp_path) not in json.dumps(stored)


@pytest.mark.parametrize("model", list(PREVIOUS), ids=lambda m: m.__name__)
def test_a_record_of_a_newer_format_is_refused_with_the_fix(
    model: type[StoredRecord], tmp_path: Path
) -> None:
    newer = {**previous(model, tmp_path), "format_version": 99}
    with pytest.raises(ValidationError, match=r"newer than this evals-pipeline reads.*upgrade"):
        model.model_validate(newer)


def test_an_envelope_of_the_previous_format_reads_as_the_current_one() -> None:
    envelope = StoredResult.model_validate(
        {"format_version": 1, "key": "k", "stored_ms": 1, "record": {}}
    )
    assert envelope.format_version == STORE_FORMAT == 3
    assert envelope.record == {} and envelope.record_path is None


@pytest.mark.parametrize(
    ("kind", "model"), [("run", AgentRun), ("session", Session), ("grade", CaseGrade)]
)
def test_a_cache_entry_of_format_2_holding_its_record_inline_still_reads(
    tmp_path: Path, kind: Kind, model: type[StoredRecord]
) -> None:
    """Format 2 held each record inside its cache entry; format 3 names the record's file. An
    entry written by the previous layout reads as the record it holds, its paths resolved."""
    root = StorageRoot(str(tmp_path / "storage"))
    record = model.model_validate(previous(model, root.local))
    data = record.model_dump(mode="json", context=root.record_context())
    data["result_key"] = "k1"
    entry = {"format_version": 2, "key": "k1", "run_id": "run-1", "stored_ms": 5, "record": data}
    folder = root.local / "suite/results/agent/case"
    folder.mkdir(parents=True)
    (folder / f"{kind}-k1.json").write_text(json.dumps(entry))

    store = ResultStore.of_suite(root, "suite")
    found = {"run": store.run, "session": store.session, "grade": store.grade}[kind](
        "case", "agent", "k1"
    )

    assert found is not None and found.reused is not None
    assert (found.reused.run_id, found.reused.stored_ms) == ("run-1", 5)
    assert found.model_copy(update={"reused": None}) == record.model_copy(
        update={"result_key": "k1"}
    )
    if isinstance(found, AgentRun):
        assert found.stdout_path == str(root.local / TRIAL / "stdout.txt")
    # Stored again, the record is written once, in its own file, and the entry names it.
    ResultStore.of_suite(root, "suite", "run-2").put(
        kind, found.model_copy(update={"reused": None})
    )
    rewritten = json.loads((folder / f"{kind}-k1.json").read_text())
    assert rewritten["format_version"] == 3 and rewritten["record"] is None
    assert json.loads((root.local / rewritten["record_path"]).read_text()) == data


def test_paths_are_stored_relative_and_resolved_against_the_root(tmp_path: Path) -> None:
    """The IO manager's records file: written under one root folder, read under another."""
    root = StorageRoot(str(tmp_path / "one"))
    run = AgentRun.model_validate(previous(AgentRun, root.local))
    outside = "/elsewhere/workspace"  # not under the root: kept as it is
    run = run.model_copy(update={"workspace_path": outside})
    path = root.local / "suite/agent_runs/run-1/records.parquet"
    write_records([("case|agent", run)], path, root.record_context())

    [(_, text)] = read_records(path)
    stored = json.loads(text)
    assert stored["stdout_path"] == TRIAL + "/stdout.txt"
    assert stored["side_files"] == {"rollout": TRIAL + "/rollout.jsonl"}
    assert stored["workspace_path"] == outside

    moved = StorageRoot(str(tmp_path / "two"))
    read = RecordReader(AgentRun, moved.record_context()).read(text)
    assert isinstance(read, AgentRun)
    assert read.stdout_path == str(moved.local / TRIAL / "stdout.txt")
    assert read.side_files == {"rollout": str(moved.local / TRIAL / "rollout.jsonl")}
    assert read.workspace_path == outside
    # Without a root, a record holds what it was given (nothing resolved or made relative).
    assert AgentRun.model_validate_json(text).stdout_path == TRIAL + "/stdout.txt"
