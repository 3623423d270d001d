"""Parquet and Arrow helpers: the same tables as pyarrow's own calls, without their imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals_pipeline.storage.parquet import read_parquet, string_array


@pytest.mark.parametrize("values", [[], [""], ["a", "é✓ — ünïcode", "x" * 10_000, ""]])
def test_string_array_holds_what_pa_array_holds(values: list[str]) -> None:
    made = string_array(values)
    made.validate(full=True)
    assert made.type == pa.string()
    assert made.equals(pa.array(values, pa.string()))


def test_a_column_the_file_lacks_reads_as_nulls_in_the_schema_order(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pq.write_table(pa.table({"b": [1, 2], "a": ["x", "y"]}), path)
    schema = pa.schema([("a", pa.string()), ("c", pa.float64()), ("b", pa.int64())])
    table = read_parquet(path, schema=schema)
    assert table.schema == schema
    assert table.to_pylist() == [{"a": "x", "c": None, "b": 1}, {"a": "y", "c": None, "b": 2}]
    assert read_parquet(path, columns=["a"]).to_pylist() == [{"a": "x"}, {"a": "y"}]


def test_records_are_written_and_read_without_pandas_or_the_dataset_layer(
    tmp_path: Path,
) -> None:
    """The first step of every run writes records; these imports cost ~0.25 s each there."""
    script = (
        "import sys; from pathlib import Path; from pydantic import BaseModel\n"
        "from evals_pipeline.storage.records import read_records, write_records\n"
        "class R(BaseModel):\n    n: int\n"
        "p = Path(sys.argv[1])\n"
        "assert write_records([('a', R(n=1)), ('b', R(n=2))], p) == 2\n"
        "assert read_records(p, {'b'}) == [('b', '{\"n\":2}')]\n"
        "print(sorted({'pandas', 'pyarrow.dataset'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "r.parquet")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"
