"""A session's transcript for the HTML case page: messages and milestone events read straight from
their Parquet columns (no pydantic object per message), every text trimmed to a few KB.

Sessions of 10 MB stay usable: each message's text and each tool input/output is cut at
`TEXT_LIMIT` with a note, and past `MESSAGE_BUDGET` characters the middle of the conversation is
left out; the note names the full messages.parquet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TEXT_LIMIT = 4_000
TOOL_LIMIT = 2_000
MESSAGE_BUDGET = 120_000
DIFF_LIMIT = 60_000


def trim(text: str | None, limit: int) -> dict[str, Any]:
    """`text` cut at `limit` characters: {"text", "cut"} where cut counts what was left out."""
    value = text or ""
    if len(value) <= limit:
        return {"text": value, "cut": 0}
    return {"text": value[:limit], "cut": len(value) - limit}


def _json_text(raw: str | None) -> str:
    """A stored JSON value as readable text: strings as themselves, the rest pretty-printed."""
    if raw is None:
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


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


def _message(row: dict[str, Any]) -> dict[str, Any]:
    text = row["content"]
    if text is None and row["content_json"] is not None:
        text = _json_text(row["content_json"])
    return {
        "index": row["index"],
        "role": row["role"],
        "name": row["name"],
        "content": trim(text, TEXT_LIMIT),
        "duration_ms": row["duration_ms"],
        "tool_calls": [
            {
                "tool": call["tool"],
                "status": call["status"],
                "duration_ms": call["duration_ms"],
                "input": trim(_json_text(call["input_json"]), TOOL_LIMIT),
                "output": trim(_json_text(call["output_json"]), TOOL_LIMIT),
            }
            for call in row["tool_calls"] or []
        ],
    }


def _size(message: dict[str, Any]) -> int:
    calls = message["tool_calls"]
    return len(message["content"]["text"]) + sum(
        len(c["input"]["text"]) + len(c["output"]["text"]) for c in calls
    )


def read_transcript(path: str | None) -> dict[str, Any]:
    """The messages of `path` trimmed for the page: {"messages", "omitted", "path", "error"}.

    When the trimmed messages still exceed MESSAGE_BUDGET, the first and last ones that fit are
    kept and `omitted` counts the messages left out between them.
    """
    out: dict[str, Any] = {"messages": [], "omitted": 0, "path": path, "error": None}
    if not path:
        return out
    if not Path(path).is_file():
        out["error"] = f"{path} is not there any more"
        return out
    rows = pq.read_table(
        path,
        columns=["index", "role", "name", "content", "content_json", "tool_calls", "duration_ms"],
    ).to_pylist()
    messages = [_message(row) for row in rows]
    if sum(_size(m) for m in messages) <= MESSAGE_BUDGET:
        out["messages"] = messages
        return out
    head: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = []
    used, low, high = 0, 0, len(messages) - 1
    while low <= high:
        # Alternate ends so both the task's start and the final answer survive.
        take_head = len(head) <= len(tail)
        message = messages[low] if take_head else messages[high]
        if used + _size(message) > MESSAGE_BUDGET:
            break
        used += _size(message)
        if take_head:
            head.append(message)
            low += 1
        else:
            tail.append(message)
            high -= 1
    out["messages"] = [*head, *reversed(tail)]
    out["omitted"] = len(messages) - len(head) - len(tail)
    out["omitted_after"] = len(head)
    return out


def milestone_events(path: str | None, seqs: list[int]) -> dict[int, str]:
    """What happened at each milestone's event, one short line each ("Bash: python test.py")."""
    if not path or not seqs or not Path(path).is_file():
        return {}
    table = pq.read_table(path, columns=["seq", "kind", "tool", "text", "tool_input_json"])
    table = table.filter(pc.is_in(table["seq"], value_set=pa.array(seqs, type=pa.int32())))
    lines: dict[int, str] = {}
    for row in table.to_pylist():
        if row["kind"] == "tool_call":
            line = f"{row['tool']}: {_brief(row['tool_input_json'])}"
        else:
            line = (row["text"] or row["kind"]).replace("\n", " ")
        lines[row["seq"]] = line[:200]
    return lines
