"""The report reads only the runs that were not launched: the marks it skips the others by are
what stored run records hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.run import AgentRun
from evals_pipeline.reporting.not_run import LAUNCHED
from evals_pipeline.storage.records import read_records, write_records


def _stored(runs: dict[str, AgentRun], path: Path) -> dict[str, str]:
    write_records(runs.items(), path)
    return dict(read_records(path))


@pytest.mark.parametrize("secret_in_stderr", [False, True])
def test_a_launched_run_is_marked_launched_and_a_run_not_launched_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_in_stderr: bool
) -> None:
    # A record holding a secret is scrubbed and written again, with JSON's spaced separators.
    monkeypatch.setenv("BENCH_SERVICE_TOKEN", "tok-0123456789")
    stderr = "auth with tok-0123456789 failed" if secret_in_stderr else "failed"
    runs = {
        "launched": AgentRun(case_key="a", agent="x", start_ms=1, end_ms=2, stderr=stderr),
        "not": AgentRun(
            case_key="b", agent="x", start_ms=1, end_ms=1, stderr=stderr, not_run="budget spent"
        ),
    }
    stored = _stored(runs, tmp_path / "runs.parquet")
    assert ("tok-0123456789" in stored["launched"]) is False
    assert ("[REDACTED" in stored["launched"]) is secret_in_stderr
    assert LAUNCHED[secret_in_stderr] in stored["launched"]  # compact, or spaced once scrubbed
    assert not any(mark in stored["not"] for mark in LAUNCHED)
