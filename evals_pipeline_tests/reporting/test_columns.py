"""The report tables' columns built from their buffers hold what `pa.array` and
`Table.from_pylist` make of the same values, nulls included."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from evals_pipeline.reporting.columns import column, rows_table
from evals_pipeline.reporting.tables import CASES_SCHEMA, DIMENSIONS_SCHEMA

VALUES: list[tuple[pa.DataType, list[Any]]] = [
    (pa.string(), ["a", None, "héllo 😀", ""]),
    (pa.int32(), [1, None, -3, 0]),
    (pa.int64(), [2**40, None, 0, -1]),
    (pa.float64(), [0.5, None, 1, -2.25]),
    (pa.bool_(), [True, None, False, True]),
    (pa.list_(pa.string()), [["x", "y"], None, [], ["é"]]),
]


@pytest.mark.parametrize(("kind", "values"), VALUES, ids=[str(k) for k, _ in VALUES])
def test_a_column_is_what_pa_array_makes(kind: pa.DataType, values: list[Any]) -> None:
    for given in (values, values[:1], [v for v in values if v is not None], []):
        built = column(given, kind)
        built.validate(full=True)
        assert built.equals(pa.array(given, kind)), given


def test_rows_are_the_table_from_pylist_makes() -> None:
    rows: list[dict[str, Any]] = [
        {"suite": "s", "case_key": "a", "score": 1.0, "trials": 2, "warnings": ["w"]},
        {"suite": "s", "case_key": "b", "error": "boom", "first_file_read_ms": 12},
    ]
    for schema in (CASES_SCHEMA, DIMENSIONS_SCHEMA):
        complete = [{name: row.get(name) for name in schema.names} for row in rows]
        assert rows_table(complete, schema).equals(pa.Table.from_pylist(rows, schema=schema))
        assert rows_table([], schema).equals(pa.Table.from_pylist([], schema=schema))
        with pytest.raises(KeyError):
            rows_table(rows, schema)
