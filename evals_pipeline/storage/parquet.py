"""Parquet and Arrow without the costly imports around them: `pq.read_table` imports
`pyarrow.dataset`, and `pa.array` over a Python list imports pandas, ~0.25 s each in every
process that does it first (a step, a grader's helper, the first step of a run)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet(
    path: str | Path,
    *,
    schema: pa.Schema | None = None,
    columns: list[str] | None = None,
    threads: bool = True,
) -> pa.Table:
    """The file's `columns` (default: all), or exactly `schema`'s columns in its types; a column
    the file lacks (written before it existed) reads as nulls, as `pq.read_table` gives it.
    Without `threads` it is read on this thread: for a file of a few KB, read by the thousand,
    pyarrow's thread pool and pre-buffering cost more than they save (~0.3 ms a file)."""
    names = schema.names if schema is not None else columns
    with pq.ParquetFile(path, pre_buffer=threads) as file:
        present = set(file.schema_arrow.names)
        wanted = [n for n in names if n in present] if names else None
        table = file.read(columns=wanted, use_threads=threads)
    if schema is None:
        return table
    for field in schema:
        if field.name not in present:
            table = table.append_column(field, pa.nulls(len(table), field.type))
    return table.select(schema.names).cast(schema)


def string_array(values: list[str]) -> pa.Array | pa.ChunkedArray:
    """`values` as an Arrow string column, made from its UTF-8 bytes and offsets: what
    `pa.array(values, pa.string())` makes, without its check for pandas objects."""
    encoded = [value.encode() for value in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    if offsets[-1] > np.iinfo(np.int32).max:  # past 2 GiB in one column: pyarrow chunks it
        return pa.array(values, pa.string())
    data = pa.py_buffer(b"".join(encoded))
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets.astype(np.int32)), data)
