"""A test's `vars`: AgentV's `{{name}}` / `{{a.b}}` placeholders filled in when a suite loads.

They fill the test's `input`, `input_files`, `criteria` (and `expected_outcome`),
`expected_output` and its turns' `input` / `expected_output`, and the suite-level `input` and
`input_files` the test receives (interpolation.ts `interpolateTemplateVars`). A placeholder that
is the whole string takes the value with its JSON type; inside text a value that is not a string
is written as JSON; a placeholder naming no value stays as written.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_WHOLE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$")
_MISSING = object()

TEST_FIELDS = ("criteria", "expected_outcome", "input", "input_files", "expected_output")
"""The test keys whose values are filled (turns are handled on their own)."""


def _lookup(values: Mapping[str, Any], expression: str) -> Any:
    current: Any = values
    for segment in expression.split("."):
        if not isinstance(current, dict) or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # JSON.stringify: compact, and true/false/null spelled the JSON way.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def fill(value: Any, values: Mapping[str, Any]) -> Any:
    """`value` with every placeholder filled from `values`, recursively (keys stay)."""
    if isinstance(value, str):
        whole = _WHOLE.match(value)
        if whole:
            found = _lookup(values, whole.group(1))
            return value if found is _MISSING else copy.deepcopy(found)

        def one(match: re.Match[str]) -> str:
            found = _lookup(values, match.group(1))
            return match.group(0) if found is _MISSING else _text(found)

        return _PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [fill(item, values) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, values) for key, item in value.items()}
    return value


def fill_test(test: dict[str, Any]) -> None:
    """Fill a raw test's fields from its own `vars`, in place (no vars: nothing changes)."""
    values = test.get("vars")
    if not isinstance(values, dict):
        return
    for key in TEST_FIELDS:
        if key in test:
            test[key] = fill(test[key], values)
    turns = test.get("turns")
    if isinstance(turns, list):
        test["turns"] = [
            {
                **turn,
                **{k: fill(turn[k], values) for k in ("input", "expected_output") if k in turn},
            }
            if isinstance(turn, dict)
            else turn
            for turn in turns
        ]
