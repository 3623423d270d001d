"""A session's messages as Parquet: written once by the enricher, read by graders via its path.

One row per message; tool calls are a nested list. Free-form values (structured content, tool
inputs and outputs, metadata) are JSON strings, so every message round-trips exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evals_pipeline.models.messages import MESSAGE_LIST, Message, PlainMessages, as_list
from evals_pipeline.secrets import run_redactor
from evals_pipeline.storage.arrow_messages import ArrowMessages
from evals_pipeline.storage.parquet import arrow_table, read_parquet
from evals_pipeline.storage.preview import preview_metadata

TOOL_CALL_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("tool", pa.string()),
        ("input_json", pa.string()),
        ("output_json", pa.string()),
        ("status", pa.string()),
        ("start_time_ms", pa.int64()),
        ("end_time_ms", pa.int64()),
        ("duration_ms", pa.int64()),
    ]
)

MESSAGES_SCHEMA = pa.schema(
    [
        ("index", pa.int32()),
        ("role", pa.string()),
        ("name", pa.string()),
        ("content", pa.string()),
        ("content_json", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        ("start_time_ms", pa.int64()),
        ("end_time_ms", pa.int64()),
        ("duration_ms", pa.int64()),
        (
            "token_usage",
            pa.struct([("input", pa.int64()), ("output", pa.int64()), ("cached", pa.int64())]),
        ),
        ("metadata_json", pa.string()),
    ]
)


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(value: str | None) -> Any:
    return None if value is None else json.loads(value)


_CALL_JSON = ("input", "output")
"""Tool-call fields stored as JSON text (`input_json`, `output_json`): free-form values."""


def _tool_call_row(call: dict[str, Any]) -> dict[str, Any]:
    """A dumped tool call as its Parquet struct."""
    return {
        f"{key}_json" if key in _CALL_JSON else key: _dump(value) if key in _CALL_JSON else value
        for key, value in call.items()
    }


def _tool_call_fields(row: dict[str, Any]) -> dict[str, Any]:
    """A tool call's Parquet struct as ToolCall fields."""
    return {
        key.removesuffix("_json"): _load(value) if key.endswith("_json") else value
        for key, value in row.items()
    }


def messages_table(messages: Sequence[Message]) -> tuple[pa.Table, bool]:
    """The transcript as columns, secrets scrubbed, and whether it holds the messages as they
    are (no secret was scrubbed)."""
    if isinstance(messages, ArrowMessages) and not _holds_secret(messages):
        return _arrow_table(messages), True
    columns = (
        _plain_columns(messages) if isinstance(messages, PlainMessages) else _columns(messages)
    )
    scrubbed = run_redactor().data(columns)
    # str.replace hands back the very string when it finds nothing: equal lists then hold the
    # same objects, and the comparison is one pass of identity checks.
    return arrow_table(scrubbed, MESSAGES_SCHEMA), scrubbed == columns


def _plain_columns(messages: PlainMessages) -> dict[str, list[Any]]:
    """Plain messages' columns: their roles and texts; every other value empty."""
    count = len(messages)
    empty: list[Any] = [None] * count
    return {
        "index": list(range(count)),
        "role": [row["role"] for row in messages.rows],
        "name": empty,
        "content": [row["content"] for row in messages.rows],
        "content_json": empty,
        "tool_calls": [[]] * count,
        "start_time_ms": empty,
        "end_time_ms": empty,
        "duration_ms": empty,
        "token_usage": empty,
        "metadata_json": empty,
    }


def _holds_secret(messages: ArrowMessages) -> bool:
    """Whether a secret may be in the messages (each column's bytes searched whole, so a match
    across two texts says yes too: then they are scrubbed text by text, as rows)."""
    redactor = run_redactor()
    if not redactor:
        return False
    for column in (messages.role, messages.content):
        for chunk in column.chunks:
            data = chunk.buffers()[2]
            if data is not None and redactor.scrub_bytes(raw := data.to_pybytes()) is not raw:
                return True
    return False


def _arrow_table(messages: ArrowMessages) -> pa.Table:
    """Plain messages' table from their columns as they are: roles and texts, the rest empty
    (what `_plain_columns` gives, without a Python value per message)."""
    count = len(messages)
    arrays: dict[str, Any] = {
        "index": pa.Array.from_buffers(
            pa.int32(), count, [None, pa.py_buffer(np.arange(count, dtype=np.int32))]
        ),
        "role": messages.role,
        "content": messages.content,
        "tool_calls": _no_tool_calls(count),
    }
    columns = [
        arrays[field.name] if field.name in arrays else pa.nulls(count, field.type)
        for field in MESSAGES_SCHEMA
    ]
    return pa.Table.from_arrays(columns, schema=MESSAGES_SCHEMA)


def _no_tool_calls(count: int) -> pa.Array:
    """`count` empty lists of tool calls (what `arrow_array([[]] * count, ...)` makes)."""
    offsets = pa.py_buffer(np.zeros(count + 1, dtype=np.int32))
    empty = pa.nulls(0, TOOL_CALL_TYPE)
    return pa.Array.from_buffers(pa.list_(TOOL_CALL_TYPE), count, [None, offsets], children=[empty])


def _columns(messages: Sequence[Message]) -> dict[str, list[Any]]:
    """The models dumped in one pydantic-core call, then one light pass that splits text from
    structured content and encodes the free-form values."""
    rows = MESSAGE_LIST.dump_python(as_list(messages))
    content: list[str | None] = []
    content_json: list[str | None] = []
    for message, row in zip(messages, rows, strict=True):
        value = row["content"]
        structured = value is not None and not isinstance(value, str)
        content.append(message.text() if structured else value)
        content_json.append(_dump(value) if structured else None)
    return {
        "index": list(range(len(rows))),
        "role": [row["role"] for row in rows],
        "name": [row["name"] for row in rows],
        "content": content,
        "content_json": content_json,
        "tool_calls": [[_tool_call_row(c) for c in row["tool_calls"]] for row in rows],
        "start_time_ms": [row["start_time_ms"] for row in rows],
        "end_time_ms": [row["end_time_ms"] for row in rows],
        "duration_ms": [row["duration_ms"] for row in rows],
        "token_usage": [row["token_usage"] for row in rows],
        "metadata_json": [_dump(row["metadata"]) for row in rows],
    }


def write_messages(messages: Sequence[Message], path: Path) -> Path:
    """Write `messages` to `path` (zstd Parquet, secrets scrubbed) and return the path."""
    write_transcript(messages, path)
    return path


def write_transcript(messages: Sequence[Message], path: Path) -> bool:
    """`write_messages`, saying whether the file holds `messages` exactly (no secret was
    scrubbed): only then may a reader in this process take the models instead of the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table, as_they_are = messages_table(messages)
    write_messages_table(table, path)
    return as_they_are


def write_messages_table(table: pa.Table, path: Path) -> None:
    """Write a messages table (zstd Parquet) with its preview in the footer (storage/preview.py):
    made now from the columns in hand, it spares every report reading the messages back."""
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(preview_metadata(table))


def read_messages(path: str | Path) -> list[Message]:
    """Read every message of a session's Parquet file, in order: column by column (JSON columns
    decoded only where they hold a value), then validated in one call (10,000 messages of a
    10 MB session: ~50 ms)."""
    table = read_parquet(path, schema=MESSAGES_SCHEMA)
    columns = {name: table.column(name).to_pylist() for name in MESSAGES_SCHEMA.names}
    content = [
        text if encoded is None else json.loads(encoded)
        for text, encoded in zip(columns["content"], columns["content_json"], strict=True)
    ]
    fields = [
        {
            "role": role,
            "name": name,
            "content": value,
            "tool_calls": [_tool_call_fields(call) for call in calls] if calls else [],
            "start_time_ms": start,
            "end_time_ms": end,
            "duration_ms": took,
            "token_usage": usage,
            "metadata": _load(metadata),
        }
        for role, name, value, calls, start, end, took, usage, metadata in zip(
            columns["role"],
            columns["name"],
            content,
            columns["tool_calls"],
            columns["start_time_ms"],
            columns["end_time_ms"],
            columns["duration_ms"],
            columns["token_usage"],
            columns["metadata_json"],
            strict=True,
        )
    ]
    return MESSAGE_LIST.validate_python(fields)
