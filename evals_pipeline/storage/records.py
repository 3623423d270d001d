"""Run-scoped record tables: one Parquet file of pydantic records per asset step.

Each row is one (case, agent) partition's record as JSON, next to its partition columns, so a
consumer reads one file per upstream step and filters to the partitions it needs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
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


def write_records(
    records: Iterable[tuple[str, BaseModel]],
    path: Path,
    context: dict[str, Any] | None = None,
    *,
    slots: bool = False,
) -> int:
    """Write (partition key, record) pairs to `path`, secrets scrubbed and each record
    serialized with `context` (storage/root.py's `record_context`: paths relative to the
    storage root); returns the row count. With `slots`, where each named secret was scrubbed is kept too (SLOTS_COLUMN), so a
    reader can put it back by position (read_record_slots)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evals_pipeline.storage.parquet import string_array

    path.parent.mkdir(parents=True, exist_ok=True)
    redactor = run_redactor()
    keys: list[str] = []
    texts: list[str] = []
    found: list[str | None] = []
    for key, record in records:
        keys.append(key)
        text, where = redactor.json_slots(record.model_dump_json(context=context))
        texts.append(text)
        found.append(json.dumps(where) if where else None)
    columns = [string_array(keys), string_array(texts)]
    schema = records_schema()
    if slots:
        columns.append(string_array(found))
        schema = schema.append(pa.field(SLOTS_COLUMN, pa.string()))
    pq.write_table(pa.Table.from_arrays(columns, schema=schema), path, compression="zstd")
    return len(keys)


def read_records(path: str | Path, partition_keys: set[str] | None = None) -> list[tuple[str, Any]]:
    """The (partition key, record JSON text) pairs of `path`, optionally only those keys."""
    from evals_pipeline.storage.parquet import read_parquet

    table = read_parquet(path, schema=records_schema())
    pairs = zip(table["partition_key"].to_pylist(), table["record_json"].to_pylist(), strict=True)
    return [(k, v) for k, v in pairs if partition_keys is None or k in partition_keys]


def read_record_slots(
    path: str | Path, partition_keys: set[str] | None = None
) -> list[tuple[str, Any, list[Slot]]]:
    """The (partition key, record JSON text, slots) of `path`, optionally only those keys: the
    slots of a file written with `write_records(slots=True)`, else none."""
    import pyarrow as pa

    from evals_pipeline.storage.parquet import read_parquet

    schema = records_schema().append(pa.field(SLOTS_COLUMN, pa.string()))
    table = read_parquet(path, schema=schema)
    rows = zip(
        table["partition_key"].to_pylist(),
        table["record_json"].to_pylist(),
        table[SLOTS_COLUMN].to_pylist(),
        strict=True,
    )
    return [
        (k, v, json.loads(s) if s else [])
        for k, v, s in rows
        if partition_keys is None or k in partition_keys
    ]
