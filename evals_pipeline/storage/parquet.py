"""Parquet and Arrow without the costly imports around them: `pq.read_table` imports
`pyarrow.dataset`, and building an array from Python values (`pa.array`, `Table.from_pylist`,
even over a numpy array) imports pandas: 0.25-0.5 s each in every process that does it first (a
step, a grader's helper, the first session a case pipeline makes and the report of every run)."""

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
    count = len(values)
    nulls = _null_count(values)
    if nulls == count:
        return pa.nulls(count, pa.string())
    texts = [value or "" for value in values] if nulls else values
    joined = "".join(texts)  # type: ignore[arg-type]
    data = joined.encode()
    if len(data) == len(joined):  # ASCII: a value's bytes are its characters
        lengths = np.fromiter(map(len, texts), np.int64, count)  # type: ignore[arg-type]
    else:
        encoded = [text.encode() for text in texts]  # type: ignore[union-attr]
        lengths = np.fromiter(map(len, encoded), np.int64, count)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    if offsets[-1] > np.iinfo(np.int32).max:  # past 2 GiB in one column: pyarrow chunks it
        return pa.array(values, pa.string())
    bitmap = _bitmap(values) if nulls else None
    return pa.StringArray.from_buffers(
        count, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data), bitmap, nulls
    )


def numpy_view(values: pa.Array) -> np.ndarray:
    """A numeric array without nulls as numpy, a view of its buffer: what `to_numpy` gives,
    without the pandas import it costs even then."""
    if values.null_count:
        raise ValueError(f"{values.null_count} nulls: fill them first")
    dtype = np.dtype(values.type.to_pandas_dtype())
    buffer = values.buffers()[1]
    offset = values.offset * dtype.itemsize
    return np.frombuffer(buffer, dtype, len(values), offset) if buffer else np.empty(0, dtype)


def arrow_array(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """`values` (Python values, None for null) as an Arrow array of `arrow_type`: strings,
    integers, float64, booleans, and structs and lists of them, built from buffers (what
    `pa.array` makes, without the pandas import it costs)."""
    if pa.types.is_string(arrow_type):
        return string_array(values)
    count = len(values)
    nulls = _null_count(values)
    if nulls == count:
        return pa.nulls(count, arrow_type)
    bitmap = _bitmap(values) if nulls else None
    if pa.types.is_integer(arrow_type) or pa.types.is_float64(arrow_type):
        filled = [0 if value is None else value for value in values] if nulls else values
        data = np.array(filled, dtype=arrow_type.to_pandas_dtype())
        return pa.Array.from_buffers(arrow_type, count, [bitmap, pa.py_buffer(data)], nulls)
    if pa.types.is_boolean(arrow_type):
        bits = np.packbits(np.array([bool(v) for v in values]), bitorder="little")
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


def _null_count(values: Sequence[Any]) -> int:
    # In C for lists and tuples (table columns come zipped from rows, as tuples).
    if isinstance(values, list | tuple):
        return values.count(None)
    return sum(v is None for v in values)


def _bitmap(values: Sequence[Any]) -> pa.Buffer:
    """Arrow's validity bitmap of `values`: a bit per value, set when it is not None."""
    valid = np.fromiter((value is not None for value in values), bool, len(values))
    return pa.py_buffer(np.packbits(valid, bitorder="little"))
