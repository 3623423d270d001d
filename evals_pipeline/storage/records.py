"""Run-scoped record tables: one Parquet file of pydantic records per asset step.

Each row is one (case, agent) partition's record as JSON, next to its partition columns, so a
consumer reads one file per upstream step and filters to the partitions it needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from evals_pipeline.secrets import run_redactor

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow (and numpy under it) is imported by the first read or write, not with the module: a
# code location imports this IO and never reads a record (~0.2 s of every Dagster process).


@functools.cache
def records_schema() -> pa.Schema:
    """The schema of every record table: a partition key and the record's JSON per row."""
    import pyarrow as pa

    return pa.schema([("partition_key", pa.string()), ("record_json", pa.string())])


def write_records(
    records: Iterable[tuple[str, BaseModel]],
    path: Path,
    export: Callable[[str], str] = str,
) -> int:
    """Write (partition key, record) pairs to `path`, secrets scrubbed and each record's text
    passed through `export` (storage/root.py: local paths as storage URIs); returns the row
    count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evals_pipeline.storage.parquet import string_array

    path.parent.mkdir(parents=True, exist_ok=True)
    redactor = run_redactor()
    keys: list[str] = []
    texts: list[str] = []
    for key, record in records:
        keys.append(key)
        texts.append(export(redactor.json(record.model_dump_json())))
    columns = [string_array(keys), string_array(texts)]
    pq.write_table(pa.Table.from_arrays(columns, schema=records_schema()), path, compression="zstd")
    return len(keys)


def read_records(path: str | Path, partition_keys: set[str] | None = None) -> list[tuple[str, Any]]:
    """The (partition key, record JSON text) pairs of `path`, optionally only those keys."""
    from evals_pipeline.storage.parquet import read_parquet

    table = read_parquet(path, schema=records_schema())
    pairs = zip(table["partition_key"].to_pylist(), table["record_json"].to_pylist(), strict=True)
    return [(k, v) for k, v in pairs if partition_keys is None or k in partition_keys]
