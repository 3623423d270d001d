"""JSON values with JavaScript's semantics, which AgentV's assertions are defined by.

Python would call `True == 1` and accept `NaN` in JSON; AgentV (JavaScript) does neither, so the
assertions compare and parse through here.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final


class _Missing:
    """A path that leads nowhere, distinct from a JSON null."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()

_FENCE = re.compile(r"```(?:json)?\n?")
_OBJECT_BLOB = re.compile(r"\{[\s\S]*\}")
_PATH_PART = re.compile(r"[^.\[\]]+")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str) -> Any:
    """Parse strict JSON (no NaN / Infinity), as JavaScript's JSON.parse does."""
    return json.loads(text, parse_constant=_reject_constant)


def parse_json_answer(text: str) -> Any:
    """Parse JSON out of an agent's answer: code fences dropped, the outermost {...} taken."""
    cleaned = _FENCE.sub("", text).strip()
    blob = _OBJECT_BLOB.search(cleaned)
    return parse_json(blob.group(0) if blob else cleaned)


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality where booleans are not numbers (JavaScript's `===` on JSON values)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(a == b)


def resolve_path(value: Any, path: str) -> Any:
    """The value at a dot path with list indexes (`a.b[0].c`); MISSING when any step is absent."""
    current = value
    for part in _PATH_PART.findall(path):
        if isinstance(current, list) and part.isdigit():
            index = int(part)
            current = current[index] if index < len(current) else MISSING
        elif isinstance(current, dict):
            current = current.get(part, MISSING)
        else:
            return MISSING
        if current is MISSING:
            return MISSING
    return current


def json_type(value: Any) -> str:
    """The JSON type name of a value, for mismatch evidence."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "string"
