"""Runs that never started keep a typed error (models/errors.py), kind `refused`, not the
`crashed` of a process that died: a target that cannot start (a failed healthcheck, a command
not on PATH: stage agent), a run the gate turned away (its dependency failed: stage setup).
Through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from evals_pipeline.storage.records import read_records
from evals_pipeline_tests.test_cli import cli, write

SUITE = """\
name: refusals
execution: {targets: [broken, flaky, missing], workers: 1}
targets:
  - name: broken
    provider: cli
    command: "echo never > {OUTPUT_FILE}"
    healthcheck: {command: "echo down >&2; exit 1"}
  - {name: flaky, provider: cli, command: "sh -c 'exit 3'"}
  - {name: missing, provider: cli, command: "no-such-agent-cli {PROMPT}"}
tests:
  - {id: first, input: q, assertions: [{type: contains, value: done}]}
  - {id: later, input: q, depends_on: [first], assertions: [{type: contains, value: done}]}
"""


def stored_errors(storage: Path, step: str) -> dict[tuple[str, str], tuple[str, str] | None]:
    """(agent, case) -> the (stage, kind) of the error each record of `step` stored."""
    errors = {}
    for path in storage.rglob(f"{step}/*/records.parquet"):
        for _, text in read_records(path):
            record = json.loads(text)
            error = record.get("error")
            key = (record["agent"], record["case_key"])
            errors[key] = (error["stage"], error["kind"]) if error else None
    return errors


def test_runs_that_never_started_store_why_by_kind(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "refusals.eval.yaml", SUITE)
    done = cli("run", str(suite), home=tmp_path)
    assert "Skipped: dependency failed (first)" in done.stdout, done.explain()
    expected = {
        ("broken", "first"): ("agent", "refused"),  # healthcheck failed: not started
        ("broken", "later"): ("agent", "refused"),
        ("flaky", "first"): ("agent", "exit_code"),  # started, exited 3
        ("flaky", "later"): ("setup", "refused"),  # its dependency failed
        ("missing", "first"): ("agent", "refused"),  # its command is not on PATH
        ("missing", "later"): ("agent", "refused"),
    }
    for step in ("agent_runs", "sessions"):
        assert stored_errors(tmp_path / "storage", step) == expected, (step, done.explain())
