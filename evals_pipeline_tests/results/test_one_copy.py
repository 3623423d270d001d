"""Each run's, session's and grade's record is stored once, through the real `evals-pipeline
run`: the result cache's entries and the run's record tables name one file holding it, and the
tables still read back as the whole records, a reused one with its mark."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from evals_pipeline.storage.records import read_records
from evals_pipeline_tests.test_cli import QUICKSTART, cli, table_rows

LAYERS = ("agent_runs", "sessions", "grades")


def content(record: dict[str, Any]) -> str:
    """A record's identity across copies: its JSON without the reused mark a copy may add."""
    return json.dumps({k: v for k, v in record.items() if k != "reused"}, sort_keys=True)


def whole_copies(storage: Path) -> Counter[str]:
    """How many places under `storage` hold each run's, session's or grade's whole JSON: rows
    of the layers' record tables, and the result store's files (a cache entry holding its
    record inline, or a record's own file)."""
    copies: Counter[str] = Counter()
    for layer in LAYERS:
        for table in storage.glob(f"*/{layer}/*/records.parquet"):
            for text in pq.read_table(table).column("record_json").to_pylist():
                record = json.loads(text)
                if "case_key" in record:  # the whole record, not the fields set over a file
                    copies[content(record)] += 1
    for path in storage.glob("*/results/*/*/*.json"):
        data = json.loads(path.read_text())
        if path.name.startswith(("trial-", "votes-", "state-")):
            continue  # a trial's grade, judges' votes, a workspace note: no layer's record
        record = data.get("record") if "key" in data else data
        if isinstance(record, dict) and "case_key" in record:
            copies[content(record)] += 1
    return copies


def bytes_under(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_each_record_is_stored_once_and_reads_back_whole(tmp_path: Path) -> None:
    first = cli("run", str(QUICKSTART), home=tmp_path)
    assert "report: " in first.stdout, first.explain()
    storage = tmp_path / "storage"
    copies = whole_copies(storage)
    assert len(copies) >= 3 * 20  # every run, session and grade of 10 cases x 2 agents
    assert {n for n in copies.values()} == {1}, copies.most_common(3)
    written = bytes_under(storage / "quickstart" / "results")

    # A second run reuses what is unchanged: its tables name the same files, adding no copy.
    second = cli("run", str(QUICKSTART), home=tmp_path)
    assert table_rows(second.stdout) == table_rows(first.stdout), second.explain()
    assert "17 of 20 results reused" in second.stdout, second.explain()
    again = whole_copies(storage)
    assert {n for n in again.values()} == {1}, again.most_common(3)
    # Only the retried failures (the crashed agent run, the erroring graders) are new.
    assert len(again) - len(copies) <= 3 * 3
    assert bytes_under(storage / "quickstart" / "results") - written < written // 2

    # Every table reads back as the whole records, a reused one with its mark.
    for layer in LAYERS:
        tables = sorted(
            (storage / "quickstart" / layer).glob("*/records.parquet"),
            key=lambda p: p.stat().st_mtime,
        )
        assert len(tables) == 2
        fresh, reused = ([json.loads(t) for _, t in read_records(p)] for p in tables)
        assert len(fresh) == len(reused) == 20
        assert all(r["case_key"] and r["reused"] is None for r in fresh)
        marked = [r for r in reused if r["reused"] is not None]
        assert len(marked) >= 17
        assert all(content(r) in copies for r in marked)  # the first run's records
