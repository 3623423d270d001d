"""Run-scoped record tables: one Parquet file of pydantic records per asset step.

Each row is one (case, agent) partition's record as JSON, next to its partition columns, so a
consumer reads one file per upstream step and filters to the partitions it needs. A record the
result store holds already (results/store.py, `record_file`) is not copied: its row names the
stored file (STORED_COLUMN) and holds only the fields set over it, and reads back whole.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from evals_pipeline.secrets import Slot, run_redactor

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow (and numpy under it) is imported by the first read or write, not with the module: a
# code location imports this IO and never reads a record (~0.2 s of every Dagster process).


@functools.cache
def records_schema() -> pa.Schema:
    """The schema of every record table: a partition key and the record's JSON per row."""
    import pyarrow as pa

    return pa.schema([("partition_key", pa.string()), ("record_json", pa.string())])


SLOTS_COLUMN = "secret_slots"
"""Where each record's text had a named secret (secrets.json_slots), as JSON; null when none.
Only written for records whose consumers need the secrets back (resolved cases)."""

STORED_COLUMN = "stored_record"
"""The file holding the row's record (the result store's, results/store.py), relative to
the table's folder; `record_json` then holds the fields set over it (a reused record's mark).
Null when the row holds its record itself."""

FETCH_THREADS = 16
"""Stored files a read downloads at once from an object-store root."""

StoredFile = Callable[[BaseModel, str], "tuple[Path, dict[str, Any]] | None"]
"""The file already holding a record whose stored JSON is the text given, and the fields to set
over it (ResultStore.stored_file); None when none holds it."""


def write_records(
    records: Iterable[tuple[str, BaseModel]],
    path: Path,
    context: dict[str, Any] | None = None,
    *,
    slots: bool = False,
    stored: StoredFile | None = None,
) -> int:
    """Write (partition key, record) pairs to `path`, secrets scrubbed and each record
    serialized with `context` (storage/root.py's `record_context`: paths relative to the
    storage root); returns the row count. With `slots`, where each named secret was scrubbed
    is kept too (SLOTS_COLUMN), so a reader can put it back by position (read_record_slots).
    With `stored`, a record a stored file holds is named, not copied (STORED_COLUMN)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evals_pipeline.storage.parquet import string_array

    path.parent.mkdir(parents=True, exist_ok=True)
    redactor = run_redactor()
    keys: list[str] = []
    texts: list[str] = []
    found: list[str | None] = []
    files: list[str | None] = []
    for key, record in records:
        keys.append(key)
        text, where = redactor.json_slots(record.model_dump_json(context=context))
        held = stored(record, text) if stored is not None else None
        if held is not None:
            text = redactor.json(json.dumps(held[1], ensure_ascii=False))
        texts.append(text)
        found.append(json.dumps(where) if where else None)
        files.append(None if held is None else os.path.relpath(held[0], path.parent))
    columns = [string_array(keys), string_array(texts)]
    schema = records_schema()
    if slots:
        columns.append(string_array(found))
        schema = schema.append(pa.field(SLOTS_COLUMN, pa.string()))
    if any(files):
        columns.append(string_array(files))
        schema = schema.append(pa.field(STORED_COLUMN, pa.string()))
    pq.write_table(pa.Table.from_arrays(columns, schema=schema), path, compression="zstd")
    return len(keys)


def read_records(
    path: str | Path,
    partition_keys: set[str] | None = None,
    fetch: Callable[[Path], object] | None = None,
) -> list[tuple[str, Any]]:
    """The (partition key, record JSON text) pairs of `path`, optionally only those keys;
    `fetch` makes a stored file a row names present first (StorageRoot.fetch_file)."""
    return [(k, v) for k, v, _ in read_record_slots(path, partition_keys, fetch)]


def read_record_slots(
    path: str | Path,
    partition_keys: set[str] | None = None,
    fetch: Callable[[Path], object] | None = None,
) -> list[tuple[str, Any, list[Slot]]]:
    """The (partition key, record JSON text, slots) of `path`, optionally only those keys: the
    slots of a file written with `write_records(slots=True)`, else none. A row naming a
    stored file reads as that file's record with the row's fields set over it."""
    import pyarrow as pa

    from evals_pipeline.storage.parquet import read_parquet

    schema = records_schema().append(pa.field(SLOTS_COLUMN, pa.string()))
    schema = schema.append(pa.field(STORED_COLUMN, pa.string()))
    table = read_parquet(path, schema=schema)
    rows = zip(
        table["partition_key"].to_pylist(),
        table["record_json"].to_pylist(),
        table[SLOTS_COLUMN].to_pylist(),
        table[STORED_COLUMN].to_pylist(),
        strict=True,
    )
    folder = Path(path).parent
    wanted = [row for row in rows if partition_keys is None or row[0] in partition_keys]
    if fetch is not None:
        _fetch_all([folder / f for _, _, _, f in wanted if f is not None], fetch)
    return [
        (k, v if f is None else _stored_text(folder / f, v), json.loads(s) if s else [])
        for k, v, s, f in wanted
    ]


def _fetch_all(files: list[Path], fetch: Callable[[Path], object]) -> None:
    """Make the stored files not here yet present, a few at a time: from an object store, a
    table's thousands of records are as many downloads."""
    from concurrent.futures import ThreadPoolExecutor

    missing = [file for file in files if not file.exists()]
    if len(missing) <= 1:
        for file in missing:
            fetch(file)
        return
    with ThreadPoolExecutor(FETCH_THREADS) as pool:
        list(pool.map(fetch, missing))


def _stored_text(file: Path, over: str) -> str:
    """The JSON of the record in the stored `file` with the fields of `over` set on it (as it
    was written, byte for byte, when none are)."""
    text = file.read_text(encoding="utf-8")
    fields = json.loads(over)
    if not fields:
        return text
    data = json.loads(text)
    data.update(fields)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
