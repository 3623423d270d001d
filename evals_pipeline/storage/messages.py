"""A session's messages as Parquet: written once by the enricher, read by graders via its path.

One row per message; tool calls are a nested list. Free-form values (structured content, tool
inputs and outputs, metadata) are JSON strings, so every message round-trips exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import TypeAdapter

from evals_pipeline.models.messages import Message
from evals_pipeline.secrets import run_redactor

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


_MESSAGE_LIST = TypeAdapter(list[Message])


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def _row(index: int, message: Message) -> dict[str, Any]:
    content = message.content
    return {
        "index": index,
        "role": message.role,
        "name": message.name,
        "content": None
        if content is None
        else content
        if isinstance(content, str)
        else message.text(),
        "content_json": None if isinstance(content, str) or content is None else _dump(content),
        "tool_calls": [
            {
                "id": call.id,
                "tool": call.tool,
                "input_json": _dump(call.input),
                "output_json": _dump(call.output),
                "status": call.status,
                "start_time_ms": call.start_time_ms,
                "end_time_ms": call.end_time_ms,
                "duration_ms": call.duration_ms,
            }
            for call in message.tool_calls
        ],
        "start_time_ms": message.start_time_ms,
        "end_time_ms": message.end_time_ms,
        "duration_ms": message.duration_ms,
        "token_usage": message.token_usage.model_dump() if message.token_usage else None,
        "metadata_json": _dump(message.metadata),
    }


def write_messages(messages: list[Message], path: Path) -> Path:
    """Write `messages` to `path` (zstd Parquet, secrets scrubbed) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    redactor = run_redactor()
    table = pa.Table.from_pylist(
        [redactor.data(_row(i, m)) for i, m in enumerate(messages)], schema=MESSAGES_SCHEMA
    )
    pq.write_table(table, path, compression="zstd")
    return path


def _message_fields(row: dict[str, Any]) -> dict[str, Any]:
    """One Parquet row as Message fields (JSON columns decoded)."""
    content = _load(row["content_json"]) if row["content_json"] is not None else row["content"]
    return {
        "role": row["role"],
        "name": row["name"],
        "content": content,
        "tool_calls": [
            {
                "tool": c["tool"],
                "id": c["id"],
                "input": _load(c["input_json"]),
                "output": _load(c["output_json"]),
                "status": c["status"],
                "start_time_ms": c["start_time_ms"],
                "end_time_ms": c["end_time_ms"],
                "duration_ms": c["duration_ms"],
            }
            for c in row["tool_calls"] or []
        ],
        "start_time_ms": row["start_time_ms"],
        "end_time_ms": row["end_time_ms"],
        "duration_ms": row["duration_ms"],
        "token_usage": row["token_usage"],
        "metadata": _load(row["metadata_json"]),
    }


def read_messages(path: str | Path) -> list[Message]:
    """Read every message of a session's Parquet file, in order."""
    table = pq.read_table(path, schema=MESSAGES_SCHEMA)
    # One validation call for the whole list: pydantic-core does it about 3x faster than a
    # model per row (10,000 messages of a 10 MB session: 0.05 s).
    return _MESSAGE_LIST.validate_python([_message_fields(row) for row in table.to_pylist()])
