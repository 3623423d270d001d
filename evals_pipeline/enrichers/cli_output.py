"""Parse AgentV's `cli` output file (or a plain-text answer) into canonical messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from evals_pipeline.enrichers.jsonl import loads_valid
from evals_pipeline.models.messages import (
    Message,
    PlainMessages,
    TokenUsage,
    iso_to_ms,
    message_from_wire,
    messages_from_wire,
)

__all__ = [
    "NOT_OUTPUT_SHAPE",
    "TRUNCATED_JSON",
    "ParsedOutput",
    "answer_warnings",
    "iso_to_ms",
    "output_figures",
    "parse_message_lines",
    "parse_output_document",
]

TRUNCATED_JSON = "the output looks like truncated JSON"
"""The start of the parse warning that doubts the answer itself; grades carry it."""


@dataclass
class ParsedOutput:
    """What an output file says; unknown or invalid parts become warnings, never exceptions."""

    messages: Sequence[Message]
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    warnings: list[str] = field(default_factory=list)


NOT_OUTPUT_SHAPE = "not AgentV's output shape"
"""The start of the warnings that name what an output file held and the run ignored (an unknown
role, a wrong type, a negative number): grades carry them, so none is a silent 0 or a lost
message."""

ROLES = ("system", "user", "assistant", "tool")
_ROLE_SET = frozenset(ROLES)


def _known_role(raw: Any) -> bool:
    """False for a message whose role is a string but not one of ROLES; a missing role or one
    that is not a string is the schema's error, which names its place."""
    role = raw.get("role") if isinstance(raw, dict) else None
    return not isinstance(role, str) or role in _ROLE_SET


def _ignored(what: str, value: Any, expected: str) -> str:
    shown = json.dumps(value, ensure_ascii=False, default=str)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{NOT_OUTPUT_SHAPE}: ignored {what}={shown} (expected {expected})"


def _non_negative(doc: dict[str, Any], key: str, warnings: list[str]) -> float | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        warnings.append(_ignored(key, value, "a number >= 0"))
        return None
    return float(value)


def _token_usage(usage: Any, warnings: list[str]) -> TokenUsage | None:
    """`token_usage` when it is whole counts >= 0 (AgentV's input and output, cached optional);
    else None, with a warning naming what was ignored."""
    if usage is None:
        return None
    expected = "whole token counts >= 0: {input, output, cached?}"
    if not isinstance(usage, dict):
        warnings.append(_ignored("token_usage", usage, expected))
        return None
    bad = [
        key
        for key in ("input", "output", "cached")
        if key in usage
        and (isinstance(usage[key], bool) or not isinstance(usage[key], int) or usage[key] < 0)
    ]
    missing = [key for key in ("input", "output") if key not in usage]
    if bad or missing:
        what = ", ".join([*(f"{k}={usage[k]!r}" for k in bad), *(f"no {k}" for k in missing)])
        warnings.append(_ignored("token_usage", usage, f"{expected}; found {what}"))
        return None
    return TokenUsage.model_validate(usage)


def _known_roles(raws: list[Any], warnings: list[str]) -> list[Any]:
    """The messages whose role is one of ROLES; each other one dropped with a warning (AgentV
    keeps any role, and answers with the last assistant message, which this keeps)."""
    if all(_known_role(raw) for raw in raws):
        return raws  # the usual case: no copy
    kept = []
    for number, raw in enumerate(raws, start=1):
        if not _known_role(raw):
            warnings.append(
                _ignored(f"output message {number}", raw, f"a role among {', '.join(ROLES)}")
            )
            continue
        kept.append(raw)
    return kept


def _schema_errors(exc: Exception) -> str:
    """A validation error in one line: where each problem is, and what it is."""
    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return "; ".join(
        f"message {'.'.join(str(p) for p in _message_path(e['loc']))}: {e['msg']}"
        for e in exc.errors()[:3]
    )


def _message_path(loc: tuple[int | str, ...]) -> list[int | str]:
    # The list index of a message is 0-based in pydantic; people count messages from 1.
    return [loc[0] + 1, *loc[1:]] if loc and isinstance(loc[0], int) else list(loc)


def parse_output_document(text: str) -> ParsedOutput:
    """AgentV's rules: `output` (or legacy `output_messages`) wins, else `text`; anything that is
    not such a JSON object becomes one assistant message holding the whole text."""
    warnings: list[str] = []
    try:
        doc = loads_valid(text, warnings)
    except json.JSONDecodeError as exc:
        doc = None
        if text.lstrip().startswith(("{", "[")):
            # AgentV grades it as plain text; an agent cut off mid-write usually looks like this.
            return ParsedOutput(
                [Message(role="assistant", content=text)],
                warnings=[
                    f"{TRUNCATED_JSON} ({exc.msg}: line {exc.lineno} column {exc.colno} of "
                    f"{len(text):,} characters): graded as plain text"
                ],
            )
    if not isinstance(doc, dict) or not ({"output", "output_messages", "text"} & doc.keys()):
        return ParsedOutput([Message(role="assistant", content=text)], warnings=warnings)
    key = "output" if "output" in doc else "output_messages"
    raw_messages = doc.get(key)
    try:
        if isinstance(raw_messages, list):
            messages = _from_wire(_known_roles(raw_messages, warnings))
        elif isinstance(raw_messages, str):
            messages = [Message(role="assistant", content=raw_messages)]
        else:
            if raw_messages is not None:
                warnings.append(_ignored(key, raw_messages, "a list of messages"))
            messages = [Message(role="assistant", content=str(doc.get("text", "")))]
    except (ValidationError, TypeError, AttributeError) as exc:
        warnings.append(
            f"{NOT_OUTPUT_SHAPE}: ignored the output messages, the whole file graded as text "
            f"({_schema_errors(exc)})"
        )
        messages = [Message(role="assistant", content=text)]
    return output_figures(doc, messages, warnings)


def output_figures(
    doc: dict[str, Any], messages: Sequence[Message], warnings: list[str] | None = None
) -> ParsedOutput:
    """`messages` with the figures `doc` gives (token usage, cost, duration), each checked:
    what is not valid is left out, with a warning appended to `warnings`."""
    warnings = [] if warnings is None else warnings
    token_usage = _token_usage(doc.get("token_usage"), warnings)
    cost = _non_negative(doc, "cost_usd", warnings)
    duration = _non_negative(doc, "duration_ms", warnings)
    return ParsedOutput(
        messages=messages,
        token_usage=token_usage,
        cost_usd=cost,
        duration_ms=int(duration) if duration is not None else None,
        warnings=warnings,
    )


def _from_wire(raws: list[Any]) -> Sequence[Message]:
    """Wire messages as plain messages when they are (models.messages.PlainMessages), else
    validated into models."""
    return PlainMessages.of(raws) or messages_from_wire(raws)


def answer_warnings(parse_warnings: list[str]) -> list[str]:
    """The session's parse warnings that doubt the answer graded or its figures (what the
    output file held that was ignored), as grades show them."""
    return [w for w in parse_warnings if w.startswith((TRUNCATED_JSON, NOT_OUTPUT_SHAPE))]


def parse_message_lines(text: str) -> ParsedOutput:
    """A recorded session as JSONL, one message per line; a bad line is a warning, not a crash."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    warnings: list[str] = []
    try:  # the usual case, every line a message: validated in one call
        raws = [loads_valid(line, warnings) for _, line in lines]
        return ParsedOutput(messages=_from_wire(raws), warnings=warnings)
    except (json.JSONDecodeError, ValidationError, TypeError, AttributeError):
        pass
    messages: list[Message] = []
    for number, line in lines:
        try:
            messages.append(message_from_wire(loads_valid(line, warnings)))
        except (json.JSONDecodeError, ValidationError, TypeError, AttributeError) as exc:
            warnings.append(f"line {number}: skipped, not a message: {str(exc).splitlines()[0]}")
    return ParsedOutput(messages=messages, warnings=warnings)
