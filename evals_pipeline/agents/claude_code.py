"""Claude Code: `claude -p --output-format stream-json`, or its transcript file."""

from __future__ import annotations

from evals_pipeline.adapters.claude_code import ClaudeCodeAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.claude_code import TOOL_NAMES, parse_claude
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.targets import ClaudeCodeTarget


def _parse(text: str, _session_file: str | None) -> EnrichedSession:
    return parse_claude(text)


AGENT = AgentKind(
    target=ClaudeCodeTarget,
    adapter=ClaudeCodeAdapter(),
    stream=AgentStream(
        formats=("claude-stream", "claude-transcript"), parser=_parse, tool_names=TOOL_NAMES
    ),
)
