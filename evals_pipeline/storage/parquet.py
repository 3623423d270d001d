"""Parquet and Arrow without the costly imports around them: `pq.read_table` imports
`pyarrow.dataset`, and building an array from Python values (`pa.array`, `Table.from_pylist`,
even over a numpy array) imports pandas: 0.25-0.5 s each in every process that does it first (a
step, a grader's helper, the first sessions step and the report of every run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


def string_array(values: Sequence[str | None]) -> pa.Array | pa.ChunkedArray:
    """`values` as an Arrow string column, made from its UTF-8 bytes and offsets: what
    `pa.array(values, pa.string())` makes, without its check for pandas objects."""
    valid = [value is not None for value in values]
    encoded = [value.encode() if value is not None else b"" for value in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    if offsets[-1] > np.iinfo(np.int32).max:  # past 2 GiB in one column: pyarrow chunks it
        return pa.array(values, pa.string())
    data = pa.py_buffer(b"".join(encoded))
    bitmap, nulls = _validity(valid)
    return pa.StringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets.astype(np.int32)), data, bitmap, nulls
    )


def arrow_array(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """`values` (Python values, None for null) as an Arrow array of `arrow_type`: strings,
    integers, float64, booleans, and structs and lists of them, built from buffers (what `pa.array` makes, without
    the pandas import it costs)."""
    if pa.types.is_string(arrow_type):
        return string_array(values)
    count = len(values)
    bitmap, nulls = _validity([value is not None for value in values])
    if pa.types.is_integer(arrow_type):
        kind = "u" if pa.types.is_unsigned_integer(arrow_type) else "i"
        data = np.fromiter(
            (0 if value is None else value for value in values),
            dtype=np.dtype(f"{kind}{arrow_type.bit_width // 8}"),
            count=count,
        )
        return pa.Array.from_buffers(arrow_type, count, [bitmap, pa.py_buffer(data)], nulls)
    if pa.types.is_float64(arrow_type):
        floats = np.fromiter((0.0 if v is None else v for v in values), np.float64, count)
        return pa.Array.from_buffers(arrow_type, count, [bitmap, pa.py_buffer(floats)], nulls)
    if pa.types.is_boolean(arrow_type):
        bits = np.packbits(np.fromiter((bool(v) for v in values), bool, count), bitorder="little")
        return pa.Array.from_buffers(arrow_type, count, [bitmap, pa.py_buffer(bits)], nulls)
    if pa.types.is_struct(arrow_type):
        children = [
            arrow_array([None if v is None else v.get(field.name) for v in values], field.type)
            for field in arrow_type
        ]
        if any(isinstance(child, pa.ChunkedArray) for child in children):
            return pa.array(values, arrow_type)  # a child past 2 GiB: pyarrow chunks the whole
        return pa.StructArray.from_buffers(arrow_type, count, [bitmap], nulls, children=children)
    if pa.types.is_list(arrow_type):
        items = [item for value in values if value is not None for item in value]
        lengths = np.fromiter((0 if v is None else len(v) for v in values), np.int64, count)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
        child = arrow_array(items, arrow_type.value_type)
        if isinstance(child, pa.ChunkedArray):
            return pa.array(values, arrow_type)
        buffers = [bitmap, pa.py_buffer(offsets)]
        return pa.Array.from_buffers(arrow_type, count, buffers, nulls, children=[child])
    return pa.array(values, arrow_type)  # any other type: pyarrow's own conversion


def arrow_table(columns: Mapping[str, Sequence[Any]], schema: pa.Schema) -> pa.Table:
    """`columns` (Python values by name) as a table of `schema`, without pandas (arrow_array)."""
    arrays = [arrow_array(columns[field.name], field.type) for field in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def arrow_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """`rows` (dicts; a missing key is null) as a table of `schema`, without pandas."""
    return arrow_table({name: [row.get(name) for row in rows] for name in schema.names}, schema)


def _validity(valid: list[bool]) -> tuple[pa.Buffer | None, int]:
    """Arrow's validity bitmap of `valid` (None when nothing is null) and the null count."""
    nulls = len(valid) - sum(valid)
    if not nulls:
        return None, 0
    return pa.py_buffer(np.packbits(np.array(valid, dtype=bool), bitorder="little")), nulls
