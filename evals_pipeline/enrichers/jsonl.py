"""Tolerant JSONL reading: agent streams get cut off, interleaved with noise, or half-written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def iter_jsonl(text: str, warnings: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for each JSON-object line of `text`, from 1.

    A malformed line, a truncated last line or a line that is not an object is appended to
    `warnings` as "line N: ..." and skipped: a stream killed mid-write must still parse.
    """
    # Split on "\n" only: str.splitlines() would also break at U+2028 and friends, which JSON
    # strings may contain raw.
    lines = text.split("\n")
    # A last line without its newline is where a killed process stopped writing.
    last = len(lines) if lines[-1].strip() else 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reason = "truncated JSON" if number == last else "not valid JSON"
            warnings.append(f"line {number}: {reason}, skipped ({exc})")
            continue
        if not isinstance(value, dict):
            warnings.append(f"line {number}: expected a JSON object, got {type(value).__name__}")
            continue
        yield number, value


def read_jsonl(text: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """All JSON-object lines of `text` with their line numbers, and the warnings for the rest."""
    warnings: list[str] = []
    return list(iter_jsonl(text, warnings)), warnings
