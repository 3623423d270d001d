"""Claude Code: `claude -p --output-format stream-json`, or its transcript file."""

from __future__ import annotations

from typing import Any

from evals_pipeline.adapters.claude_code import ClaudeCodeAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.claude_code import TOOL_NAMES, claude_stream
from evals_pipeline.enrichers.streams import StreamFormat
from evals_pipeline.models.targets import ClaudeCodeTarget

_STREAM_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})


def sniff(line: dict[str, Any]) -> StreamFormat | None:
    """A transcript line links to its parent (`parentUuid`) or names its session (`sessionId`);
    a stream-json line carries `session_id`."""
    kind = line.get("type")
    if not isinstance(kind, str):
        return None
    if "parentUuid" in line or "sessionId" in line or (kind == "summary" and "leafUuid" in line):
        return "claude-transcript"
    if "session_id" in line and kind in _STREAM_TYPES:
        return "claude-stream"
    return None


AGENT = AgentKind(
    target=ClaudeCodeTarget,
    adapter=ClaudeCodeAdapter(),
    stream=AgentStream(
        formats=("claude-stream", "claude-transcript"),
        reader=claude_stream,
        tool_names=TOOL_NAMES,
        sniff=sniff,
    ),
    # Its settings folder (the login is `.credentials.json` there), and its account file.
    logins=(".claude", ".claude.json"),
)
