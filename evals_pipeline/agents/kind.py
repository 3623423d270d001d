"""`AgentKind`: what evals-pipeline knows of one agent, in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals_pipeline.adapters.agent_cli import AgentCliAdapter
from evals_pipeline.adapters.base import Adapter
from evals_pipeline.enrichers.streams import StreamFormat
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.targets import TargetBase, provider_of

StreamParser = Callable[[str, str | None], EnrichedSession]
"""A stream's text (and the agent's session file beside it, e.g. codex's rollout) to the
canonical event model."""


@dataclass(frozen=True)
class AgentStream:
    """How an agent CLI reports a run: the stream formats it writes, their parser, and the
    native tool names in them."""

    formats: tuple[StreamFormat, ...]
    parser: StreamParser
    tool_names: ToolNames
    reads_session_file: bool = False
    """The parser also reads the CLI's session file (codex's rollout), when one was kept."""


@dataclass(frozen=True)
class AgentKind:
    """One provider a target can name: its target model (which also holds AgentV's aliases),
    the adapter that runs it, and, for an agent CLI, its stream."""

    target: type[TargetBase]
    adapter: Adapter
    stream: AgentStream | None = None

    @property
    def kind(self) -> str:
        """The provider name (`claude-code`), as targets write it and runs record it."""
        return provider_of(self.target)

    @property
    def agentv_aliases(self) -> tuple[str, ...]:
        return self.target.agentv_aliases

    @property
    def cli(self) -> AgentCliAdapter | None:
        """The agent CLI adapter (binary, version probe, auth), or None for other providers."""
        return self.adapter if isinstance(self.adapter, AgentCliAdapter) else None
