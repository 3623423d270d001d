"""`AgentKind`: what evals-pipeline knows of one agent, in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals_pipeline.adapters.agent_cli import AgentCliAdapter
from evals_pipeline.adapters.base import Adapter
from evals_pipeline.enrichers.builder import ParsedStream
from evals_pipeline.enrichers.jsonl import Source
from evals_pipeline.enrichers.streams import LineSniff, StreamFormat
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.targets import TargetBase, provider_of

StreamReader = Callable[[Source, Source | None], ParsedStream]
"""A stream (a text, or an open file read line by line, never whole) and the agent's session
file beside it (codex's rollout), to the parsed events and messages (enrichers/builder.py)."""


@dataclass(frozen=True)
class AgentStream:
    """How an agent CLI reports a run: the stream formats it writes and how to tell them from a
    line (`sniff`, for `replay` and `import-sessions`), their reader, the native tool names."""

    formats: tuple[StreamFormat, ...]
    reader: StreamReader
    tool_names: ToolNames
    sniff: LineSniff
    """One JSON line to one of `formats` (or `enrichers.streams.Provisional`), else None."""
    reads_session_file: bool = False
    """The reader also reads the CLI's session file (codex's rollout), when one was kept."""

    def parser(self, text: str, session_file: str | None = None) -> EnrichedSession:
        """The stream in the canonical event model (events, messages and milestones filled in)."""
        return self.reader(text, session_file if self.reads_session_file else None).enriched()


@dataclass(frozen=True)
class AgentKind:
    """One provider a target can name: its target model (which also holds AgentV's aliases),
    the adapter that runs it, for an agent CLI its stream, and where it keeps its login."""

    target: type[TargetBase]
    adapter: Adapter
    stream: AgentStream | None = None
    logins: tuple[str, ...] = ()
    """Where the agent keeps its login and settings, relative to a home folder (`.claude`,
    `.claude.json`): hidden from every sandboxed child, agents' and graders' alike, so that no
    agent under test reads the runner's logins of any agent."""

    @property
    def kind(self) -> str:
        """The provider name (`claude-code`), as targets write it and runs record it."""
        return provider_of(self.target)

    @property
    def agentv_aliases(self) -> tuple[str, ...]:
        return self.target.agentv_aliases

    @property
    def login_stores(self) -> tuple[str, ...]:
        """`logins`, and the agent CLI's login file (`credentials_file`) when it names one."""
        own = (self.cli.credentials_file,) if self.cli and self.cli.credentials_file else ()
        return tuple(dict.fromkeys((*self.logins, *own)))

    @property
    def cli(self) -> AgentCliAdapter | None:
        """The agent CLI adapter (binary, version probe, auth), or None for other providers."""
        return self.adapter if isinstance(self.adapter, AgentCliAdapter) else None
