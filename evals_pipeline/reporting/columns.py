"""Arrow columns from Python lists, built from their buffers: `pa.array` (and so
`Table.from_pylist`) checks each input for pandas objects, which imports pandas (~0.3 s) in a
process that never uses it, such as the report step. Values are the Python values
`Table.from_pylist` takes for the same types, None for null."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

from evals_pipeline.storage.parquet import string_array

_NUMPY = {
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.float64(): np.float64,
}


def rows_table(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """What `pa.Table.from_pylist(rows, schema=schema)` makes of rows that each have every
    column of `schema` (a KeyError names one that does not)."""
    names = schema.names
    if not rows:  # (schema.empty_table() imports pandas too)
        return pa.Table.from_arrays([column([], f.type) for f in schema], schema=schema)
    # Rows into columns in C (itemgetter, zip): 50,000 rows of 18 columns, one by one, took ~1 s.
    picked = map(itemgetter(*names), rows) if len(names) > 1 else ((row[names[0]],) for row in rows)
    arrays = [
        column(values, f.type) for values, f in zip(zip(*picked, strict=True), schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def column(values: Sequence[Any], kind: pa.DataType) -> pa.Array:
    """One column of `kind`: string, int32, int64, float64, bool or a list of strings."""
    n = len(values)
    valid = [v is not None for v in values]
    validity = None if all(valid) else pa.py_buffer(np.packbits(valid, bitorder="little"))
    if kind == pa.string():
        data = string_array(["" if v is None else v for v in values])
        assert isinstance(data, pa.StringArray), "a report column past 2 GiB"
        return pa.Array.from_buffers(kind, n, [validity, *data.buffers()[1:]])
    if kind == pa.bool_():
        bits = np.packbits(np.array([bool(v) for v in values], dtype=bool), bitorder="little")
        return pa.Array.from_buffers(kind, n, [validity, pa.py_buffer(bits)])
    if kind in _NUMPY:
        data = np.array([0 if v is None else v for v in values], dtype=_NUMPY[kind])
        return pa.Array.from_buffers(kind, n, [validity, pa.py_buffer(data)])
    if isinstance(kind, pa.ListType) and kind.value_type == pa.string():
        lengths = np.fromiter((len(v or ()) for v in values), dtype=np.int32, count=n)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
        items = column([item for v in values for item in v or ()], pa.string())
        return pa.Array.from_buffers(kind, n, [validity, pa.py_buffer(offsets)], children=[items])
    raise TypeError(f"no column of {kind}")
