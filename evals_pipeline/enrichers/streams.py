"""The stream parsers by agent kind, and sniffing which agent wrote a stream of unknown origin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from evals_pipeline.enrichers.claude_code import parse_claude
from evals_pipeline.enrichers.codex import ROLLOUT_LINE_TYPES, parse_codex
from evals_pipeline.enrichers.jsonl import iter_jsonl
from evals_pipeline.enrichers.pi_agent import parse_pi
from evals_pipeline.models.events import EnrichedSession

StreamFormat = Literal[
    "claude-stream", "claude-transcript", "codex-exec", "codex-rollout", "pi-json", "pi-session"
]

STREAM_PARSERS: dict[str, Callable[[str], EnrichedSession]] = {
    "claude-code": parse_claude,
    "codex": parse_codex,
    "pi-agent": parse_pi,
}
"""Parser per agent kind; each takes the stream's text and also reads the agent's session file
(codex: the rollout)."""

FORMAT_KINDS: dict[StreamFormat, str] = {
    "claude-stream": "claude-code",
    "claude-transcript": "claude-code",
    "codex-exec": "codex",
    "codex-rollout": "codex",
    "pi-json": "pi-agent",
    "pi-session": "pi-agent",
}

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


def parse_stream(kind: str, text: str, *, rollout: str | None = None) -> EnrichedSession:
    """Parse an agent stream of the given kind; `rollout` is codex's session log, if kept."""
    parser = STREAM_PARSERS.get(kind)
    if parser is None:
        raise ValueError(
            f"no stream parser for agent kind {kind!r}; known: {sorted(STREAM_PARSERS)}"
        )
    if kind == "codex":
        return parse_codex(text, rollout)
    session = parser(text)
    if rollout is not None:
        session.parse_warnings.append(f"a rollout file only applies to codex, not {kind}: ignored")
    return session


def detect_stream_kind(text: str) -> str | None:
    """The agent kind ("claude-code", "codex", "pi-agent") that wrote a stream, or None."""
    stream_format = detect_stream_format(text)
    return FORMAT_KINDS[stream_format] if stream_format else None


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
