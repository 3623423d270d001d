"""The result store on disk: entries are renamed into place whole, and one cut short (as a
power cut can leave it, since entries are not flushed to disk) reads as a miss, not an error."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.models.run import AgentRun
from evals_pipeline.results.store import ResultStore


def test_a_stored_run_reads_back_and_one_cut_short_is_a_miss(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results", run_id="run-1")
    run = AgentRun(case_key="t1", agent="bot", start_ms=1, end_ms=2, result_key="k1")
    store.put("run", run)
    found = store.run("t1", "bot", "k1")
    assert found is not None and found.reused is not None and found.reused.run_id == "run-1"
    assert found.model_copy(update={"reused": None}) == run
    [entry] = (tmp_path / "results").rglob("run-k1.json")
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".")]  # no temporary left
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    assert store.run("t1", "bot", "k1") is None
    entry.write_bytes(b"")
    assert store.run("t1", "bot", "k1") is None
