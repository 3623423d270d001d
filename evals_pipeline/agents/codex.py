"""Codex CLI: `codex exec --json`, with its rollout file, or the rollout alone."""

from __future__ import annotations

from typing import Any

from evals_pipeline.adapters.codex import CodexAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.codex.exec_stream import codex_stream
from evals_pipeline.enrichers.codex.fields import TOOL_NAMES
from evals_pipeline.enrichers.codex.rollout import ROLLOUT_LINE_TYPES
from evals_pipeline.enrichers.streams import StreamFormat
from evals_pipeline.models.targets import CodexTarget


def sniff(line: dict[str, Any]) -> StreamFormat | None:
    """A rollout line is `{timestamp, type, payload}`; an exec event's type is dotted."""
    kind = line.get("type")
    if not isinstance(kind, str):
        return None
    if kind in ROLLOUT_LINE_TYPES and "payload" in line:
        return "codex-rollout"
    if kind.startswith(("thread.", "turn.", "item.")):
        return "codex-exec"
    return None


AGENT = AgentKind(
    target=CodexTarget,
    adapter=CodexAdapter(),
    stream=AgentStream(
        formats=("codex-exec", "codex-rollout"),
        reader=codex_stream,
        tool_names=TOOL_NAMES,
        sniff=sniff,
        reads_session_file=True,
    ),
    logins=(".codex",),  # its home (`CODEX_HOME`): `auth.json`, config, rollouts
)
