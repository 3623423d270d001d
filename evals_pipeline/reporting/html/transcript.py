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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evals_pipeline.storage.parquet import arrow_array, numpy_view, read_parquet

TEXT_LIMIT = 4_000
TOOL_LIMIT = 2_000
MESSAGE_BUDGET = 80_000
DIFF_LIMIT = 60_000
SMALL_TABLE = 256_000
"""A transcript of at most this many bytes (as Arrow holds it) is trimmed in plain Python."""
MESSAGE_COLUMNS = ["index", "role", "name", "content", "tool_calls", "duration_ms"]


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


def _column(table: pa.Table, name: str) -> pa.Array:
    """One column as a single array (the table is read whole, so chunks only split it)."""
    column = table[name]
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


# Arrow values from Python ones (`pa.scalar(0)`, as `pc.fill_null(values, 0)` makes it, or
# `pa.array`) and arrays' `to_numpy` import pandas, ~0.25 s in the report's process: values here
# are made and read through their buffers (storage/parquet.py).
_ZERO = arrow_array([0], pa.int32())[0]


def _lengths(values: pa.Array) -> np.ndarray:
    """Each value's length in characters, 0 for null."""
    return numpy_view(pc.fill_null(pc.utf8_length(values), _ZERO))


def _head(values: pa.Array, limit: int) -> list[str | None]:
    sliced: list[str | None] = pc.utf8_slice_codeunits(values, 0, limit).to_pylist()
    return sliced


def _decoded(raw: str | None, total: int, limit: int) -> dict[str, Any]:
    """A tool input/output stored as JSON (`raw`: its first characters, `total`: its length),
    as readable text cut at `limit`. A string shows as itself, anything else pretty-printed;
    the count of what was cut is exact unless the value was too long to decode whole
    (`approximate`: escapes in the unread part count as written)."""
    if raw is None:
        return {"text": "", "cut": 0}
    if len(raw) >= total:
        return trim(_json_text(raw), limit)
    if raw.startswith('"'):
        # A long JSON string read in part: decode what was read, dropping a cut escape.
        for end in range(len(raw), len(raw) - 7, -1):
            try:
                text = json.loads(raw[:end] + '"')
            except ValueError:
                continue
            # The unread raw characters, less the closing quote, are (about) the rest.
            rest = len(text) - limit + total - len(raw) - 1
            return {"text": text[:limit], "cut": rest, "approximate": True}
    return {"text": raw[:limit], "cut": total - limit}


def _size(row: int, content: np.ndarray, calls: np.ndarray) -> int:
    return int(min(content[row], TEXT_LIMIT) + calls[row])


def _kept(content: np.ndarray, calls: np.ndarray) -> tuple[list[int], int]:
    """The rows to show: all when they fit MESSAGE_BUDGET, else the first and last that fit
    (taken from both ends in turn, so the task's start and the final answer survive), and the
    position where the left-out middle goes."""
    count = len(content)
    sizes = [_size(i, content, calls) for i in range(count)]
    if sum(sizes) <= MESSAGE_BUDGET:
        return list(range(count)), count
    head: list[int] = []
    tail: list[int] = []
    used, low, high = 0, 0, count - 1
    while low <= high:
        take_head = len(head) <= len(tail)
        row = low if take_head else high
        if used + sizes[row] > MESSAGE_BUDGET:
            break
        used += sizes[row]
        if take_head:
            head.append(row)
            low += 1
        else:
            tail.append(row)
            high -= 1
    return [*head, *reversed(tail)], len(head)


def read_transcript(path: str | None) -> dict[str, Any]:
    """The messages of `path` trimmed for the page: {"messages", "omitted", "omitted_after",
    "path", "error"}.

    Columns are measured and cut in Arrow; only the kept rows, already cut, become Python
    objects, so a 10 MB session costs about what a small one does. A small session (most of
    them: a report of 10,000 cases reads 10,000) is trimmed the same way in plain Python, which
    costs a tenth of Arrow's per-call overhead. When the trimmed messages exceed
    MESSAGE_BUDGET, `omitted` messages are left out after the first `omitted_after`.
    """
    out: dict[str, Any] = {
        "messages": [],
        "omitted": 0,
        "omitted_after": 0,
        "path": path,
        "error": None,
    }
    if not path:
        return out
    if not Path(path).is_file():
        out["error"] = f"{path} is not there any more"
        return out
    table = read_parquet(path, columns=MESSAGE_COLUMNS, threads=False)
    if table.num_rows == 0:
        return out
    trimmed = _trimmed_small if table.nbytes <= SMALL_TABLE else _trimmed
    messages, rows, split = trimmed(table)
    out["messages"] = messages
    out["omitted"] = table.num_rows - rows
    out["omitted_after"] = split
    return out


def _trimmed_small(table: pa.Table) -> tuple[list[dict[str, Any]], int, int]:
    """_trimmed on a table small enough to hold as Python objects: the same messages."""
    rows = table.to_pylist()
    content = [len(row["content"] or "") for row in rows]
    calls = [
        sum(
            min(len(call["input_json"] or ""), TOOL_LIMIT)
            + min(len(call["output_json"] or ""), TOOL_LIMIT)
            for call in row["tool_calls"] or ()
        )
        for row in rows
    ]
    kept, split = _kept(np.array(content), np.array(calls))
    raw_limit = 2 * TOOL_LIMIT + 2
    messages: list[dict[str, Any]] = []
    for position in kept:
        row = rows[position]
        text = (row["content"] or "")[:TEXT_LIMIT]
        tool_calls: list[dict[str, Any]] = []
        for call in row["tool_calls"] or ():
            item: dict[str, Any] = {name: call[name] for name in ("tool", "status", "duration_ms")}
            for name in ("input", "output"):
                raw = call[f"{name}_json"]
                head = None if raw is None else raw[:raw_limit]
                item[name] = _decoded(head, len(raw or ""), TOOL_LIMIT)
            tool_calls.append(item)
        messages.append(
            {
                **{name: row[name] for name in ("index", "role", "name", "duration_ms")},
                "content": {"text": text, "cut": max(0, content[position] - len(text))},
                "tool_calls": tool_calls,
            }
        )
    return messages, len(kept), split


def _trimmed(table: pa.Table) -> tuple[list[dict[str, Any]], int, int]:
    """The kept messages of `table`, cut, with how many rows were kept and where the left-out
    middle goes; measured and cut in Arrow."""
    # The stored `content` is the message as text (structured content flattened), so it is
    # what the page shows; tool inputs and outputs are JSON.
    content_length = _lengths(_column(table, "content"))
    calls = _column(table, "tool_calls")
    flat = pc.list_flatten(calls)
    parents = numpy_view(pc.list_parent_indices(calls))
    call_sizes = np.minimum(_lengths(pc.struct_field(flat, "input_json")), TOOL_LIMIT) + np.minimum(
        _lengths(pc.struct_field(flat, "output_json")), TOOL_LIMIT
    )
    per_message = np.bincount(parents, weights=call_sizes, minlength=table.num_rows)
    rows, split = _kept(content_length, per_message)
    kept = table.take(arrow_array(rows, pa.int64()))
    texts = _head(_column(kept, "content"), TEXT_LIMIT)
    kept_calls = _column(kept, "tool_calls")
    kept_flat = pc.list_flatten(kept_calls)
    owners = pc.list_parent_indices(kept_calls).to_pylist()
    raw_limit = 2 * TOOL_LIMIT + 2
    fields = {
        name: pc.struct_field(kept_flat, name).to_pylist()
        for name in ("tool", "status", "duration_ms")
    }
    inputs = pc.struct_field(kept_flat, "input_json")
    outputs = pc.struct_field(kept_flat, "output_json")
    io = {
        "input": (_head(inputs, raw_limit), _lengths(inputs)),
        "output": (_head(outputs, raw_limit), _lengths(outputs)),
    }
    messages: list[dict[str, Any]] = []
    meta = kept.select(["index", "role", "name", "duration_ms"]).to_pylist()
    for position, row in enumerate(meta):
        total = int(content_length[rows[position]])
        text = texts[position] or ""
        messages.append(
            {
                **row,
                "content": {"text": text, "cut": max(0, total - len(text))},
                "tool_calls": [],
            }
        )
    for k, owner in enumerate(owners):
        call: dict[str, Any] = {name: values[k] for name, values in fields.items()}
        for name, (heads, lengths) in io.items():
            call[name] = _decoded(heads[k], int(lengths[k]), TOOL_LIMIT)
        messages[owner]["tool_calls"].append(call)
    return messages, len(rows), split


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
