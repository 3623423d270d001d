"""Evidence text for a firing: one-line snippets of messages, commands and events."""

from __future__ import annotations

import re
from typing import Any

from evals_pipeline.enrichers.milestones import tool_command
from evals_pipeline.models.events import EnrichedEvent

_SNIPPET = 160


def cite(event: EnrichedEvent, text: str) -> str:
    return f"event:{event.seq} {event.kind}: {snip(text)}"


def snip(text: Any) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def snip_around(text: str, match: re.Match[str]) -> str:
    start = max(0, match.start() - 40)
    return snip(text[start : match.end() + 80])


def snip_last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return snip(lines[-1] if lines else "")


def snip_command(event: EnrichedEvent) -> str:
    return snip(tool_command(event.tool_input) or "")
