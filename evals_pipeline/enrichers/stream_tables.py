"""A parsed agent stream stored as its session's two Parquet files, straight from the parser's
events and message dicts to Arrow columns: no model per event or message, each tool input
JSON-encoded once for both files. The files are byte for byte those the canonical models
make (storage/events.py, storage/messages.py); models are made only if a grader asks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from evals_pipeline.enrichers.builder import ParsedStream, StreamEvent
from evals_pipeline.models.messages import RowMessages, TokenUsage
from evals_pipeline.models.session import TraceSummary
from evals_pipeline.secrets import run_redactor
from evals_pipeline.storage.events import EVENTS_SCHEMA
from evals_pipeline.storage.messages import MESSAGES_SCHEMA, write_messages_table
from evals_pipeline.storage.parquet import arrow_table

FAILED_TOOL_STATUSES = frozenset({"error", "timeout", "cancelled"})
_PLAIN_EVENT_COLUMNS = tuple(
    name for name in EVENTS_SCHEMA.names if name not in ("tool_input_json", "detail_json")
)


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _usage(usage: TokenUsage | None) -> dict[str, int] | None:
    return (
        None
        if usage is None
        else {"input": usage.input, "output": usage.output, "cached": usage.cached}
    )


def event_columns(events: list[StreamEvent]) -> dict[str, list[Any]]:
    """The events as the columns of EVENTS_SCHEMA, free-form values JSON-encoded."""
    columns: dict[str, list[Any]] = {
        name: [getattr(event, name) for event in events] for name in _PLAIN_EVENT_COLUMNS
    }
    columns["token_usage"] = [_usage(event.token_usage) for event in events]
    columns["tool_input_json"] = [_dump(event.tool_input) for event in events]
    columns["detail_json"] = [_dump(event.detail) for event in events]
    return columns


def message_columns(messages: list[dict[str, Any]], input_json: list[Any]) -> dict[str, list[Any]]:
    """The messages as the columns of MESSAGES_SCHEMA; a tool call's input is its event's JSON
    (`input_json`, by the call's `seq`)."""
    return {
        "index": list(range(len(messages))),
        "role": [m["role"] for m in messages],
        "name": [m["name"] for m in messages],
        "content": [m["content"] for m in messages],
        "content_json": [None] * len(messages),  # a stream's content is always text
        "tool_calls": [[_call_row(c, input_json) for c in m["tool_calls"]] for m in messages],
        "start_time_ms": [m["start_time_ms"] for m in messages],
        "end_time_ms": [m["end_time_ms"] for m in messages],
        "duration_ms": [m["duration_ms"] for m in messages],
        "token_usage": [_usage(m["token_usage"]) for m in messages],
        "metadata_json": [_dump(m["metadata"]) for m in messages],
    }


def _call_row(call: dict[str, Any], input_json: list[Any]) -> dict[str, Any]:
    return {
        "id": call["id"],
        "tool": call["tool"],
        "input_json": input_json[call["seq"]],
        "output_json": _dump(call["output"]),
        "status": call["status"],
        "start_time_ms": call["start_time_ms"],
        "end_time_ms": call["end_time_ms"],
        "duration_ms": call["duration_ms"],
    }


def write_stream_tables(parsed: ParsedStream, session_dir: Path) -> tuple[Path, Path, bool]:
    """Write the events and messages Parquet files (secrets scrubbed); their paths, and whether
    the messages file holds the messages as they are (no secret was scrubbed)."""
    redactor = run_redactor()
    events = event_columns(parsed.events)
    events_path = session_dir / "events.parquet"
    table = arrow_table(redactor.data(events), EVENTS_SCHEMA)
    pq.write_table(table, events_path, compression="zstd")
    columns = message_columns(parsed.messages, events["tool_input_json"])
    del events, table  # the events' columns are not needed for the messages' table
    scrubbed = redactor.data(columns)
    messages_path = session_dir / "messages.parquet"
    write_messages_table(arrow_table(scrubbed, MESSAGES_SCHEMA), messages_path)
    # str.replace hands back the very string when it finds nothing: see storage/messages.py.
    return events_path, messages_path, scrubbed == columns


def stream_trace_summary(messages: list[dict[str, Any]], llm_calls: int) -> TraceSummary:
    """`trace_summary` of the message dicts (enrichers/session.py), without their models."""
    calls = [call for m in messages for call in m["tool_calls"]]
    durations: Counter[str] = Counter()
    for call in calls:
        if call["duration_ms"] is not None:
            durations[call["tool"]] += call["duration_ms"]
    return TraceSummary(
        event_count=len(messages) + len(calls),
        tool_calls=dict(Counter(call["tool"] for call in calls)),
        error_count=sum(1 for call in calls if call["status"] in FAILED_TOOL_STATUSES),
        tool_durations=dict(durations),
        llm_call_count=llm_calls,
    )


class StreamMessages(RowMessages):
    """A parsed stream's messages, made models on first use (by a grader in this process)."""

    __slots__ = ()
