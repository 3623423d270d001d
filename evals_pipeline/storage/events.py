"""A session's canonical events as Parquet, next to its messages: one row per event.

Written once by the enricher. Reports and LLM judges query it (pandas, DuckDB) for tool
sequences, timings and injected context without re-parsing any CLI's stream.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline.secrets import run_redactor
from evals_pipeline.storage.parquet import arrow_rows, read_parquet

USAGE_TYPE = pa.struct([("input", pa.int64()), ("output", pa.int64()), ("cached", pa.int64())])

EVENTS_SCHEMA = pa.schema(
    [
        ("seq", pa.int32()),
        ("kind", pa.string()),
        ("turn_index", pa.int32()),
        ("timestamp_ms", pa.int64()),
        ("role", pa.string()),
        ("text", pa.string()),
        ("tool", pa.string()),
        ("native_tool", pa.string()),
        ("tool_call_id", pa.string()),
        ("tool_input_json", pa.string()),
        ("tool_output", pa.string()),
        ("status", pa.string()),
        ("exit_code", pa.int64()),
        ("duration_ms", pa.int64()),
        ("source", pa.string()),
        ("label", pa.string()),
        ("token_usage", USAGE_TYPE),
        ("model", pa.string()),
        ("detail_json", pa.string()),
    ]
)

_JSON_FIELDS = {"tool_input": "tool_input_json", "detail": "detail_json"}


def _row(event: EnrichedEvent) -> dict[str, Any]:
    row = event.model_dump(exclude=set(_JSON_FIELDS))
    for field, column in _JSON_FIELDS.items():
        value = getattr(event, field)
        row[column] = None if value is None else json.dumps(value, ensure_ascii=False)
    return row


def write_events(events: list[EnrichedEvent], path: Path) -> Path:
    """Write `events` to `path` (zstd Parquet, secrets scrubbed) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    redactor = run_redactor()
    table = arrow_rows([redactor.data(_row(e)) for e in events], EVENTS_SCHEMA)
    pq.write_table(table, path, compression="zstd")
    return path


def read_events(path: str | Path) -> list[EnrichedEvent]:
    """Read a session's events back, in order."""
    events = []
    for row in read_parquet(path, schema=EVENTS_SCHEMA).to_pylist():
        for field, column in _JSON_FIELDS.items():
            raw = row.pop(column)
            row[field] = None if raw is None else json.loads(raw)
        usage = row.pop("token_usage")
        events.append(
            EnrichedEvent.model_validate(
                {**row, "token_usage": TokenUsage(**usage) if usage else None}
            )
        )
    return events
