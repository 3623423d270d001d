"""A transcript's preview: its messages trimmed to what a case page shows, a few KB however long
the session. Made when the session's Parquet file is written, from the Arrow table in hand, and
kept in the file's footer (key-value metadata), so a report of 3,000 sessions of 10 MB reads
3,000 footers, not 30 GB of messages. A file written without it is trimmed when read
(reporting/html/transcript.py).

Each message's text and each tool input/output is cut at `TEXT_LIMIT` / `TOOL_LIMIT` with the
count of what was cut, and past `MESSAGE_BUDGET` characters the middle of the conversation is
left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evals_pipeline.storage.parquet import arrow_array, numpy_view

PREVIEW_KEY = b"evals_pipeline.preview"
"""The footer key of a messages file's preview: its JSON, {"messages", "omitted",
"omitted_after"}."""
PREVIEW_VERSION = 1
"""Bumped when the preview's shape or trimming changes: an older stored preview is ignored and the
messages are trimmed again when read."""

TEXT_LIMIT = 4_000
TOOL_LIMIT = 2_000
MESSAGE_BUDGET = 80_000
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


def _kept(content: np.ndarray, calls: np.ndarray) -> tuple[list[int], int]:
    """The rows to show: all when they fit MESSAGE_BUDGET, else the first and last that fit
    (taken from both ends in turn, so the task's start and the final answer survive), and the
    position where the left-out middle goes. Measured in numpy: a 10 MB session has ~10,000."""
    count = len(content)
    sizes = np.minimum(content, TEXT_LIMIT) + calls
    if sizes.sum() <= MESSAGE_BUDGET:
        return list(range(count)), count
    # The order rows are taken in: first, last, second, second-to-last, ... each row once.
    order = np.empty(count, np.int64)
    order[0::2] = np.arange((count + 1) // 2)
    order[1::2] = count - 1 - np.arange(count // 2)
    # Sizes are >= 0: the rows taken are those before the first that no longer fits.
    taken = int(np.searchsorted(np.cumsum(sizes[order]), MESSAGE_BUDGET, side="right"))
    head, tail = order[0:taken:2].tolist(), order[1:taken:2].tolist()
    return [*head, *reversed(tail)], len(head)


def preview(table: pa.Table) -> dict[str, Any]:
    """The preview of a messages table: {"messages", "omitted", "omitted_after", "version"}.
    Columns are measured and cut in Arrow; only the kept rows, already cut, become Python
    objects. A small table (most sessions) is trimmed the same way in plain Python, which costs
    a tenth of Arrow's per-call overhead."""
    out: dict[str, Any] = {"messages": [], "omitted": 0, "omitted_after": 0}
    if table.num_rows:
        table = table.select(MESSAGE_COLUMNS)
        trimmed = _trimmed_small if table.nbytes <= SMALL_TABLE else _trimmed
        messages, rows, split = trimmed(table)
        out = {"messages": messages, "omitted": table.num_rows - rows, "omitted_after": split}
    return {**out, "version": PREVIEW_VERSION}


def preview_metadata(table: pa.Table) -> dict[bytes, bytes]:
    """The footer entry holding `table`'s preview (compact JSON, UTF-8)."""
    encoded = json.dumps(preview(table), ensure_ascii=False, separators=(",", ":"))
    return {PREVIEW_KEY: encoded.encode()}


def stored_preview(path: str | Path) -> str | None:
    """The preview's JSON kept in the footer of the messages file at `path`, if this version
    of it is there (a footer read: a few KB, not the messages). It is checked to be one JSON
    object, so it can be spliced into a page's script as it is."""
    metadata = pq.read_metadata(path).metadata or {}
    found = metadata.get(PREVIEW_KEY)
    if found is None or not found.endswith(b',"version":%d}' % PREVIEW_VERSION):
        return None
    text = found.decode(errors="replace")
    try:
        valid = isinstance(json.loads(text), dict)
    except ValueError:
        valid = False
    return text if valid else None


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
