"""A session's transcript for the HTML case page: its preview (storage/preview.py, kept in the
messages file's footer or made from the file) and its milestone events, read straight from their
Parquet columns (no pydantic object per message). The note under a cut transcript names the full
messages.parquet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from evals_pipeline.storage.parquet import arrow_array, read_parquet
from evals_pipeline.storage.preview import (
    MESSAGE_BUDGET,
    MESSAGE_COLUMNS,
    TEXT_LIMIT,
    TOOL_LIMIT,
    preview,
    stored_preview,
    trim,
)

__all__ = [
    "DIFF_LIMIT",
    "MESSAGE_BUDGET",
    "TEXT_LIMIT",
    "TOOL_LIMIT",
    "milestone_events",
    "read_transcript",
    "transcript_json",
    "trim",
]

DIFF_LIMIT = 60_000


def _brief(raw: str | None) -> str:
    """A tool input on one line: a lone string field (a command, a path) as itself."""
    if raw is None:
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, dict):
        strings = [v for v in value.values() if isinstance(v, str)]
        if strings:
            return strings[0]
    return json.dumps(value, ensure_ascii=False)


def read_transcript(path: str | None) -> dict[str, Any]:
    """The messages of `path` trimmed for the page: {"messages", "omitted", "omitted_after",
    "path", "error"} (storage/preview.py). When the trimmed messages exceed MESSAGE_BUDGET,
    `omitted` messages are left out after the first `omitted_after`."""
    loaded: dict[str, Any] = json.loads(transcript_json(path))
    loaded.pop("version", None)
    return loaded


def transcript_json(path: str | None) -> str:
    """`read_transcript` as compact JSON: the preview in the file's footer is spliced in as
    stored, never decoded; a file without one (written before previews) is trimmed here."""
    head = f'{{"path":{json.dumps(path, ensure_ascii=False)},"error":'
    if not path:
        return head + 'null,"messages":[],"omitted":0,"omitted_after":0}'
    if not Path(path).is_file():
        error = json.dumps(f"{path} is not there any more", ensure_ascii=False)
        return head + error + ',"messages":[],"omitted":0,"omitted_after":0}'
    stored = stored_preview(path)
    if stored is not None:
        return head + "null," + stored[1:]
    table = read_parquet(path, columns=MESSAGE_COLUMNS, threads=False)
    made = json.dumps(preview(table), ensure_ascii=False, separators=(",", ":"))
    return head + "null," + made[1:]


def milestone_events(path: str | None, seqs: list[int]) -> dict[int, str]:
    """What happened at each milestone's event, one short line each ("Bash: python test.py")."""
    if not path or not seqs or not Path(path).is_file():
        return {}
    columns = ["seq", "kind", "tool", "text", "tool_input_json"]
    table = read_parquet(path, columns=columns, threads=False)
    table = table.filter(pc.is_in(table["seq"], value_set=arrow_array(seqs, pa.int32())))
    lines: dict[int, str] = {}
    for row in table.to_pylist():
        if row["kind"] == "tool_call":
            line = f"{row['tool']}: {_brief(row['tool_input_json'])}"
        else:
            line = (row["text"] or row["kind"]).replace("\n", " ")
        lines[row["seq"]] = line[:200]
    return lines
