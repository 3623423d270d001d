"""pi: `pi --mode json -p`, or its session file."""

from __future__ import annotations

from typing import Any

from evals_pipeline.adapters.pi_agent import PiAgentAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.pi_agent import TOOL_NAMES, pi_stream
from evals_pipeline.enrichers.streams import Provisional, StreamFormat
from evals_pipeline.models.targets import PiAgentTarget

_EVENTS = frozenset(
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
_ENTRIES = frozenset({"message", "model_change", "thinking_level_change", "compaction"})


def sniff(line: dict[str, Any]) -> StreamFormat | Provisional | None:
    """`--mode json` events by their type; session-file entries link to a `parentId`. Both start
    with the same `session` header, so the header alone decides nothing yet."""
    kind = line.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "session" and "version" in line:
        return Provisional("pi-json")
    if kind in _EVENTS:
        return "pi-json"
    if kind in _ENTRIES and "parentId" in line:
        return "pi-session"
    return None


AGENT = AgentKind(
    target=PiAgentTarget,
    adapter=PiAgentAdapter(),
    stream=AgentStream(
        formats=("pi-json", "pi-session"), reader=pi_stream, tool_names=TOOL_NAMES, sniff=sniff
    ),
    logins=(".pi",),  # its folder: `agent/auth.json`, settings, sessions
)
