"""Sniffing which CLI output or session file a stream of unknown origin is; the agent kind that
writes each format is the registry's (evals_pipeline/agents/registry.py)."""

from __future__ import annotations

from typing import Any, Literal

from evals_pipeline.enrichers.codex.rollout import ROLLOUT_LINE_TYPES
from evals_pipeline.enrichers.jsonl import iter_jsonl

StreamFormat = Literal[
    "claude-stream", "claude-transcript", "codex-exec", "codex-rollout", "pi-json", "pi-session"
]

SNIFF_LINES = 20
_PI_EVENTS = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "auto_retry_start",
    }
)
_PI_ENTRIES = frozenset({"message", "model_change", "thinking_level_change", "compaction"})


def detect_stream_format(text: str) -> StreamFormat | None:
    """Which CLI output or session file `text` is, from its first few valid JSON lines."""
    pi_header = False
    for count, (_, line) in enumerate(iter_jsonl(text, [])):
        if count >= SNIFF_LINES:
            break
        found = _line_format(line)
        if found == "pi-json" and line.get("type") == "session":
            pi_header = True  # stdout and session file both start so: look further
        elif found:
            return found
    return "pi-json" if pi_header else None


def _line_format(line: dict[str, Any]) -> StreamFormat | None:
    kind = line.get("type")
    if not isinstance(kind, str):
        return None
    if kind in ROLLOUT_LINE_TYPES and "payload" in line:
        return "codex-rollout"
    if kind.startswith(("thread.", "turn.", "item.")):
        return "codex-exec"
    if "parentUuid" in line or "sessionId" in line or (kind == "summary" and "leafUuid" in line):
        return "claude-transcript"
    if "session_id" in line and kind in ("system", "assistant", "user", "result", "stream_event"):
        return "claude-stream"
    if kind == "session" and "version" in line:
        return "pi-json"
    if kind in _PI_EVENTS:
        return "pi-json"
    if kind in _PI_ENTRIES and "parentId" in line:
        return "pi-session"
    return None
