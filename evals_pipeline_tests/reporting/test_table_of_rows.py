"""The report tables' rows turned into columns hold what `Table.from_pylist` makes of them,
nulls included; a row missing a column is an error, not a null."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from evals_pipeline.reporting.tables import (
    CASES_SCHEMA,
    DIMENSIONS_SCHEMA,
    PAIRWISE_SCHEMA,
    table_of_rows,
)


def test_rows_are_the_table_from_pylist_makes() -> None:
    rows: list[dict[str, Any]] = [
        {"suite": "s", "case_key": "a", "score": 1.0, "trials": 2, "warnings": ["w", "é"]},
        {"suite": "s", "case_key": "b", "error": "boom", "first_file_read_ms": 12},
        {"suite": "s", "case_key": "c", "passed": True, "no_majority": False, "n_votes": 3},
    ]
    for schema in (CASES_SCHEMA, DIMENSIONS_SCHEMA, PAIRWISE_SCHEMA):
        complete = [{name: row.get(name) for name in schema.names} for row in rows]
        built = table_of_rows(complete, schema)
        built.validate(full=True)
        assert built.equals(pa.Table.from_pylist(rows, schema=schema))
        assert table_of_rows([], schema).equals(pa.Table.from_pylist([], schema=schema))
        with pytest.raises(KeyError):
            table_of_rows(rows, schema)
