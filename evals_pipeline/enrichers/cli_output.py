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
    "TRUNCATED_JSON",
    "ParsedOutput",
    "answer_warnings",
    "iso_to_ms",
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


def _non_negative(doc: dict[str, Any], key: str, warnings: list[str]) -> float | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        warnings.append(f"ignored {key}={value!r}: expected a non-negative number")
        return None
    return float(value)


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
    raw_messages = doc.get("output", doc.get("output_messages"))
    try:
        if isinstance(raw_messages, list):
            messages = _from_wire(raw_messages)
        elif isinstance(raw_messages, str):
            messages = [Message(role="assistant", content=raw_messages)]
        else:
            messages = [Message(role="assistant", content=str(doc.get("text", "")))]
    except (ValidationError, TypeError, AttributeError) as exc:
        warnings.append(f"output messages do not fit the schema, kept as text: {exc}")
        messages = [Message(role="assistant", content=text)]
    usage = doc.get("token_usage")
    token_usage = None
    if isinstance(usage, dict):
        try:
            token_usage = TokenUsage.model_validate(usage)
        except ValidationError:
            warnings.append(f"ignored token_usage={usage!r}: expected input/output/cached counts")
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
    """The session's parse warnings that doubt the answer graded, as grades show them."""
    return [w for w in parse_warnings if w.startswith(TRUNCATED_JSON)]


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
