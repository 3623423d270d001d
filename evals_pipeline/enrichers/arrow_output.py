"""AgentV's output file read straight to Arrow when its messages are plain (a role and a text
each, a long CLI session's usual shape): pyarrow's JSON reader parses the file in C++ into the
columns the session's Parquet file stores, with no Python string or dict per message, and the
file's text is never held in Python. Any other shape, or any doubt (a warning cli_output.py
would give), is None: then the file is parsed as it always was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from evals_pipeline.enrichers.cli_output import ROLES, ParsedOutput, output_figures
from evals_pipeline.storage.arrow_messages import ArrowMessages
from evals_pipeline.storage.parquet import string_array

PLAIN = pa.struct([("role", pa.string()), ("content", pa.string())])
_SCHEMA = pa.schema([("output", pa.list_(PLAIN))])
"""`output` as plain messages; any other key is inferred (and a message with more keys than
these two shows as a struct with more fields: not plain)."""
_FIGURES = ("token_usage", "cost_usd", "duration_ms")
_BOM = b"\xef\xbb\xbf"  # json.loads refuses it (the file is then graded as text); Arrow skips it
_ROLE_SET = string_array(ROLES)


def read_plain_output(path: Path) -> ParsedOutput | None:
    """The output file at `path` as plain messages in Arrow, with its figures; None unless it is
    one JSON object whose `output` is a list of `{"role", "content"}` objects with a known role
    and a text, and whose figures are valid."""
    size = path.stat().st_size
    with path.open("rb") as file:
        head = file.read(_HEAD)
    if not 0 < size < _MAX_BLOCK or head.startswith(_BOM) or not _plain_start(head):
        return None
    try:
        table = pj.read_json(
            path,
            # One block: the file is one JSON object, however long.
            read_options=pj.ReadOptions(use_threads=False, block_size=size + 1),
            parse_options=pj.ParseOptions(
                explicit_schema=_SCHEMA, unexpected_field_behavior="infer", newlines_in_values=True
            ),
        )
        # Arrow's reader passes invalid UTF-8 on, where read_text(errors="replace") mends it.
        table.validate(full=True)
    except (pa.ArrowException, OSError, OverflowError):
        return None  # not JSON, lone surrogates, a key twice, a text that is not a string
    messages = _plain_messages(table)
    if messages is None:
        return None
    figures = {
        name: table.column(name)[0].as_py() for name in _FIGURES if name in table.schema.names
    }
    parsed = output_figures(figures, messages)
    return None if parsed.warnings else parsed


_HEAD = 64 * 1024
_MAX_BLOCK = 2**31 - 1
"""Arrow's block size is 32-bit, and so are a string column's offsets: a longer file is parsed
by json.loads."""
_FIRST_MESSAGE = re.compile(rb'\A\s*\{\s*"output"\s*:\s*\[\s*(?=\{)')


def _plain_start(head: bytes) -> bool:
    """False when the file's first bytes show it is not plain: its first message has another
    key than a role and a text. A failed attempt costs a whole parse in Arrow, so a session of
    tool calls is not read twice. True when the head cannot tell (the first message is longer)."""
    start = _FIRST_MESSAGE.match(head)
    if start is None:
        return head.lstrip().startswith(b"{")  # `output` later, or a document of no messages
    try:
        first, _ = json.JSONDecoder().raw_decode(head.decode(errors="replace"), start.end())
    except ValueError:
        return True  # cut by the head's end
    return type(first) is dict and first.keys() == {"role", "content"}


def _plain_messages(table: pa.Table) -> ArrowMessages | None:
    """The table's one row's `output`, as two columns, when every message is plain."""
    output = table.column("output")
    if table.num_rows != 1 or output.null_count or output.num_chunks != 1:
        return None
    items = output.chunk(0).flatten()  # the list's values: one struct per message
    if not len(items) or items.type != PLAIN or items.null_count:
        return None  # no messages: a list, as cli_output.py makes it
    role, content = items.field("role"), items.field("content")
    if role.null_count or content.null_count:
        return None
    if not pc.all(pc.is_in(role, value_set=_ROLE_SET)).as_py():
        return None  # an unknown role: cli_output.py drops it, with a warning
    return ArrowMessages(pa.chunked_array([role]), pa.chunked_array([content]))
