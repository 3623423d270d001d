"""Reading one Parquet file without pyarrow's dataset layer: `pq.read_table` imports
`pyarrow.dataset`, ~0.25 s in every process that reads a file (a step, a grader's helper)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet(
    path: str | Path, *, schema: pa.Schema | None = None, columns: list[str] | None = None
) -> pa.Table:
    """The file's `columns` (default: all), or exactly `schema`'s columns in its types; a column
    the file lacks (written before it existed) reads as nulls, as `pq.read_table` gives it."""
    names = schema.names if schema is not None else columns
    with pq.ParquetFile(path) as file:
        present = set(file.schema_arrow.names)
        table = file.read(columns=[n for n in names if n in present] if names else None)
    if schema is None:
        return table
    for field in schema:
        if field.name not in present:
            table = table.append_column(field, pa.nulls(len(table), field.type))
    return table.select(schema.names).cast(schema)
