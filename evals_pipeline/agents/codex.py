"""Codex CLI: `codex exec --json`, with its rollout file, or the rollout alone."""

from __future__ import annotations

from evals_pipeline.adapters.codex import CodexAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.codex.exec_stream import parse_codex
from evals_pipeline.enrichers.codex.fields import TOOL_NAMES
from evals_pipeline.models.targets import CodexTarget

AGENT = AgentKind(
    target=CodexTarget,
    adapter=CodexAdapter(),
    stream=AgentStream(
        formats=("codex-exec", "codex-rollout"),
        parser=parse_codex,
        tool_names=TOOL_NAMES,
        reads_session_file=True,
    ),
)
