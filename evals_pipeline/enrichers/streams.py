"""Sniffing which CLI output or session file a stream of unknown origin is: each agent's stream
declares its formats and a per-line check (`AgentStream.sniff`, evals_pipeline/agents/), and the
registry hands every agent's check in, so an installed agent's recordings are recognised too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evals_pipeline.enrichers.jsonl import iter_jsonl

StreamFormat = str
"""A stream format's name (`claude-stream`, `codex-rollout`, `pi-session`, ...), unique across
the agents: the registry finds the agent kind that writes it."""


@dataclass(frozen=True)
class Provisional:
    """A line that could begin more than one of an agent's formats (pi's `session` header starts
    both its stdout and its session file): taken when no later line of the head decides."""

    format: StreamFormat


LineSniff = Callable[[dict[str, Any]], StreamFormat | Provisional | None]
"""One agent's check of one JSON line: the format it shows, or None when it is not this agent's."""

SNIFF_LINES = 20


def sniffed_format(text: str, sniffs: Sequence[LineSniff]) -> StreamFormat | None:
    """Which format `text` is, from its first few valid JSON lines: the first line one of
    `sniffs` (in registry order) claims decides; a provisional claim only if nothing does."""
    provisional: StreamFormat | None = None
    for count, (_, line) in enumerate(iter_jsonl(text, [])):
        if count >= SNIFF_LINES:
            break
        for sniff in sniffs:
            found = sniff(line)
            if isinstance(found, Provisional):
                provisional = provisional or found.format  # look further
            elif found:
                return found
    return provisional
