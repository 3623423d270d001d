"""The registry of agents, and the per-agent tables derived from it: the adapter of each
provider, the stream reader of each agent kind, the agent that wrote each stream format."""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points

from evals_pipeline.adapters.agent_cli import AgentCliAdapter
from evals_pipeline.adapters.base import Adapter
from evals_pipeline.agents import claude_code, cli, codex, llm, mock, pi_agent, replay
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.builder import ParsedStream
from evals_pipeline.enrichers.jsonl import Source
from evals_pipeline.enrichers.streams import StreamFormat, sniffed_format
from evals_pipeline.enrichers.tool_names import NO_TOOLS, canonical_tool
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.targets import LlmTarget, TargetBase, provider_aliases, register_targets
from evals_pipeline.models.targets import LlmTargetSpec as LlmTargetSpec  # re-exported: see below
from evals_pipeline.models.targets import TargetSpec as TargetSpec
from evals_pipeline.sandbox.hidden import register_agent_logins

ENTRY_POINT_GROUP = "evals_pipeline.agents"
"""Agents outside this package: an installed distribution names its `AgentKind` (or a tuple of
them) under this entry-point group, e.g. `my-agent = "my_agent:AGENT"` (docs/agents.md)."""


def detect_stream_format(text: str) -> StreamFormat | None:
    """Which agent's CLI output or session file `text` is, by every registered agent's sniff."""
    return sniffed_format(text, [stream.sniff for stream in STREAMS.values()])


def detect_stream_kind(text: str) -> str | None:
    """The agent kind ("claude-code", "codex", "pi-agent", an installed one) that wrote a
    stream, or None."""
    stream_format = detect_stream_format(text)
    return FORMAT_KINDS.get(stream_format) if stream_format else None


BUILT_IN: tuple[AgentKind, ...] = (
    cli.AGENT,
    mock.AGENT,
    replay.agent(detect_stream_kind),
    claude_code.AGENT,
    codex.AGENT,
    pi_agent.AGENT,
    *llm.AGENTS,
)
"""The agents shipped here, in the order suites' messages list them."""


def installed_agents() -> tuple[AgentKind, ...]:
    """The agents other installed distributions add (ENTRY_POINT_GROUP), by entry-point name."""
    found: list[AgentKind] = []
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        loaded = entry.load()
        for agent in loaded if isinstance(loaded, tuple) else (loaded,):
            if not isinstance(agent, AgentKind):
                raise TypeError(
                    f"entry point {entry.value!r} ({ENTRY_POINT_GROUP}) is no AgentKind"
                )
            found.append(agent)
    return tuple(found)


AGENTS: tuple[AgentKind, ...] = (*BUILT_IN, *installed_agents())
"""Every provider a target can name, in the order suites' messages list them."""

register_targets(tuple(agent.target for agent in AGENTS))
# `TargetSpec` and `LlmTargetSpec` validate against the target models registered here: code that
# validates them imports them from this module, so the registry is loaded first.

BY_KIND: Mapping[str, AgentKind] = {agent.kind: agent for agent in AGENTS}

PROVIDERS: tuple[str, ...] = tuple(BY_KIND)
"""Every provider name a target can write, in the order suites' messages list them."""

PROVIDER_ALIASES: Mapping[str, str] = provider_aliases()
"""AgentV's names for providers, accepted as they are written there (each target model's
`agentv_aliases`)."""

RUNNABLE_TARGETS: tuple[type[TargetBase], ...] = tuple(agent.target for agent in AGENTS)
"""The target models a run can use, one per provider."""

LLM_PROVIDERS: tuple[str, ...] = tuple(
    agent.kind for agent in AGENTS if issubclass(agent.target, LlmTarget)
)
"""The providers that are an LLM API (judges can use them), not an agent."""

ADAPTERS: Mapping[str, Adapter] = {agent.kind: agent.adapter for agent in AGENTS}
"""The adapter that runs each provider's targets."""

STREAMS: Mapping[str, AgentStream] = {
    agent.kind: agent.stream for agent in AGENTS if agent.stream is not None
}
"""The stream (formats, parser, tool names) of each agent CLI kind."""

FORMAT_KINDS: Mapping[StreamFormat, str] = {
    stream_format: kind for kind, stream in STREAMS.items() for stream_format in stream.formats
}
"""The agent kind that writes each stream format."""

AGENT_CLIS: Mapping[str, AgentCliAdapter] = {
    agent.kind: agent.cli for agent in AGENTS if agent.cli is not None
}
"""The agent CLI adapters by provider: their binary, key variable and login file."""

LOGIN_STORES: tuple[str, ...] = tuple(
    dict.fromkeys(store for agent in AGENTS for store in agent.login_stores)
)
"""Every agent's login stores, relative to a home folder: no sandboxed child reads them."""

register_agent_logins(LOGIN_STORES)
# sandbox/ hides them from here on: it cannot import this registry, whose adapters it serves.


def agent_for(provider: str) -> AgentKind:
    """The registry entry of a provider as a suite may write it (AgentV's aliases too, any case)."""
    key = provider.strip().lower()
    found = BY_KIND.get(PROVIDER_ALIASES.get(key, key))
    if found is None:
        raise KeyError(f"no agent {provider!r}; known: {', '.join(BY_KIND)}")
    return found


def cli_adapter(target: TargetSpec) -> AgentCliAdapter | None:
    """The agent CLI adapter of a target, or None when its provider is no agent CLI."""
    return AGENT_CLIS.get(target.provider)


def read_stream(kind: str, source: Source, *, rollout: Source | None = None) -> ParsedStream:
    """Read an agent stream of the given kind (a text, or an open file line by line); `rollout`
    is the CLI's session file beside it, if kept, read by the agents that read one (codex)."""
    stream = STREAMS.get(kind)
    if stream is None:
        raise ValueError(f"no stream parser for agent kind {kind!r}; known: {sorted(STREAMS)}")
    if stream.reads_session_file or rollout is None:
        return stream.reader(source, rollout)
    parsed = stream.reader(source, None)
    readers = ", ".join(k for k, s in STREAMS.items() if s.reads_session_file)
    parsed.session.parse_warnings.append(
        f"a rollout file only applies to {readers}, not {kind}: ignored"
    )
    return parsed


def parse_stream(kind: str, text: str, *, rollout: str | None = None) -> EnrichedSession:
    """`read_stream` of texts, in the canonical event model."""
    return read_stream(kind, text, rollout=rollout).enriched()


def agent_tool(kind: str, native_name: str, tool_input: object = None) -> str:
    """The canonical name of an agent kind's native tool ("Other" when unknown)."""
    stream = STREAMS.get(kind)
    return canonical_tool(stream.tool_names if stream else NO_TOOLS, native_name, tool_input)
