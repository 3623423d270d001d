"""Tolerant JSON and JSONL reading: agent streams get cut off, interleaved with noise, or
half-written, and strings cut in half."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

LONE_SURROGATES = "lone UTF-16 surrogates (a character cut in half) were replaced with U+FFFD"
_SURROGATE = re.compile("[\ud800-\udfff]")  # json pairs the halves it can: one left is lone
# A surrogate's escape, \uD800 to \uDFFF: one scan, ~4x faster than `"\\ud" in text` twice.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def loads_valid(text: str, warnings: list[str]) -> Any:
    """`json.loads`, with every string valid Unicode: a `\\ud83d` escape without its other half
    (as JavaScript writes a string cut mid-emoji) decodes to a lone surrogate, which can be
    neither stored nor encoded for a grader; it becomes U+FFFD, with a warning."""
    value = json.loads(text)
    if _ESCAPED_SURROGATE.search(text):  # only then can a surrogate be in it
        checked = _valid_unicode(value)
        if checked != value and LONE_SURROGATES not in warnings:
            warnings.append(LONE_SURROGATES)
        return checked
    return value


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_valid_unicode(item) for item in value]
    if isinstance(value, dict):
        return {_valid_unicode(key): _valid_unicode(item) for key, item in value.items()}
    return value


Source = str | Iterable[str]
"""A stream's text, or its lines as an open text file yields them (each with its "\\n" but the
last, when the writer stopped mid-line): read line by line, the text is never held whole."""


def iter_jsonl(source: Source, warnings: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for each JSON-object line of `source`, from 1.

    A malformed line, a truncated last line or a line that is not an object is appended to
    `warnings` as "line N: ..." and skipped: a stream killed mid-write must still parse.
    """
    for number, line, cut in _lines(source):
        if not line.strip():
            continue
        try:
            value = loads_valid(line, warnings)
        except (ValueError, RecursionError) as exc:
            reason = "truncated JSON" if cut else "not valid JSON"
            warnings.append(f"line {number}: {reason}, skipped ({exc})")
            continue
        if not isinstance(value, dict):
            warnings.append(f"line {number}: expected a JSON object, got {type(value).__name__}")
            continue
        yield number, value


def _lines(source: Source) -> Iterator[tuple[int, str, bool]]:
    """Each line of `source` without its "\\n", numbered from 1, and whether it is a last line
    cut short (no "\\n" after it: where a killed process stopped writing)."""
    if isinstance(source, str):
        # Split on "\n" only: str.splitlines() would also break at U+2028 and friends, which
        # JSON strings may contain raw.
        lines = source.split("\n")
        last = len(lines)
        for number, line in enumerate(lines, start=1):
            yield number, line, number == last
        return
    for number, line in enumerate(source, start=1):
        if line.endswith("\n"):
            yield number, line[:-1], False
        else:
            yield number, line, True


def read_jsonl(text: Source) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """All JSON-object lines of `text` with their line numbers, and the warnings for the rest."""
    warnings: list[str] = []
    return list(iter_jsonl(text, warnings)), warnings
