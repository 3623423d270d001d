"""Parquet and Arrow helpers: the same tables as pyarrow's own calls, without their imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals_pipeline.storage.parquet import (
    arrow_array,
    arrow_rows,
    arrow_table,
    numpy_view,
    read_parquet,
    string_array,
)


@pytest.mark.parametrize(
    "values",
    [[], [""], ["a", "é✓ — ünïcode", "x" * 10_000, ""], [None, "a", None], ["é", None], [None]],
)
def test_string_array_holds_what_pa_array_holds(values: list[str]) -> None:
    made = string_array(values)
    made.validate(full=True)
    assert made.type == pa.string()
    assert made.equals(pa.array(values, pa.string()))


CALL = pa.struct([("id", pa.string()), ("took", pa.int64()), ("n", pa.int32())])
NESTED = [
    (pa.int64(), [1, None, -(2**40), 0]),
    (pa.int32(), [None, None]),
    (pa.uint8(), [255, 0]),
    (CALL, [{"id": "a", "took": 3, "n": None}, None, {"id": None, "took": None, "n": 7}]),
    (pa.list_(CALL), [[{"id": "x", "took": 1, "n": 2}, None], [], None, [{"id": "y"}]]),
    (pa.list_(pa.string()), [["a", None], None, [], ["é"]]),
    (pa.float64(), [1.5, None, -0.0, float("inf")]),
    (pa.bool_(), [True, None, False, True, False, False, True, True, False]),
    (pa.date32(), [None]),  # not built from buffers: pyarrow's own conversion
]


@pytest.mark.parametrize(("arrow_type", "values"), NESTED)
def test_arrow_array_holds_what_pa_array_holds(arrow_type: pa.DataType, values: list) -> None:
    made = arrow_array(values, arrow_type)
    made.validate(full=True)
    assert made.type == arrow_type
    assert made.equals(pa.array(values, arrow_type))
    assert made.to_pylist() == pa.array(values, arrow_type).to_pylist()


def test_arrow_tables_are_the_schema_in_order() -> None:
    schema = pa.schema([("b", pa.int64()), ("a", pa.list_(CALL))])
    table = arrow_table({"a": [[], None], "b": [1, 2]}, schema)
    assert table.schema == schema
    assert table.to_pylist() == [{"b": 1, "a": []}, {"b": 2, "a": None}]
    rows = [{"a": [{"id": "x"}], "b": 3}, {"b": 4}]  # a missing key is null
    assert arrow_rows(rows, schema).equals(pa.Table.from_pylist(rows, schema=schema))


def test_a_column_the_file_lacks_reads_as_nulls_in_the_schema_order(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pq.write_table(pa.table({"b": [1, 2], "a": ["x", "y"]}), path)
    schema = pa.schema([("a", pa.string()), ("c", pa.float64()), ("b", pa.int64())])
    table = read_parquet(path, schema=schema)
    assert table.schema == schema
    assert table.to_pylist() == [{"a": "x", "c": None, "b": 1}, {"a": "y", "c": None, "b": 2}]
    assert read_parquet(path, columns=["a"]).to_pylist() == [{"a": "x"}, {"a": "y"}]


COSTLY = "print(sorted({'pandas', 'pyarrow.dataset'} & set(sys.modules)))\n"


def costly_imports(script: str, path: Path) -> str:
    """Which costly modules a fresh process running `script` (with `path` as its argument)
    imported; the script must pass."""
    done = subprocess.run(
        [sys.executable, "-c", script + COSTLY, str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


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
    )
    assert costly_imports(script, tmp_path / "r.parquet") == "[]"


def test_a_session_is_written_without_pandas(tmp_path: Path) -> None:
    """Every run's sessions step writes one; pandas' import costs ~0.5 s there."""
    script = (
        "import sys; from pathlib import Path\n"
        "from evals_pipeline.models.messages import Message, ToolCall\n"
        "from evals_pipeline.storage.messages import read_messages, write_messages\n"
        "m = [Message(role='user', content='hi'), Message(role='assistant', content=None,\n"
        "     tool_calls=[ToolCall(tool='Read', input={'p': 1}, output='x', duration_ms=5)])]\n"
        "assert read_messages(write_messages(m, Path(sys.argv[1]))) == m\n"
    )
    assert costly_imports(script, tmp_path / "s.parquet") == "[]"


def test_a_long_session_is_shown_without_pandas(tmp_path: Path) -> None:
    """Every report's case pages read their transcripts (a long one is measured in Arrow)."""
    script = (
        "import sys; from pathlib import Path\n"
        "from evals_pipeline.models.messages import Message, ToolCall\n"
        "from evals_pipeline.reporting.html.transcript import read_transcript\n"
        "from evals_pipeline.storage.messages import write_messages\n"
        "call = ToolCall(tool='Read', input={'p': 1})\n"
        "m = [Message(role='assistant', content='x' * 1000, tool_calls=[call])] * 2000\n"
        "shown = read_transcript(str(write_messages(m, Path(sys.argv[1]))))\n"
        "assert shown['messages'] and shown['omitted'] > 0, shown['omitted']\n"
    )
    assert costly_imports(script, tmp_path / "s.parquet") == "[]"


def test_a_numeric_column_is_viewed_in_numpy_from_its_buffer() -> None:
    values = arrow_array([5, 6, 7, 8], pa.int32()).slice(1, 2)  # an offset into the buffer
    view = numpy_view(values)
    assert view.dtype == np.int32 and view.tolist() == [6, 7]
    assert numpy_view(arrow_array([], pa.int64())).tolist() == []
    with pytest.raises(ValueError, match="1 nulls"):
        numpy_view(arrow_array([1, None], pa.int64()))
