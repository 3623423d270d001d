"""The agent registry (evals_pipeline/agents/) is the one place per-agent facts live: every
entry is complete, every provider a suite can name finds exactly one entry, and the per-agent
tables elsewhere are the registry's, not copies of it."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import evals_pipeline
import evals_pipeline.agents
from evals_pipeline.adapters import identity, runner
from evals_pipeline.adapters.agent_cli import AgentCliAdapter
from evals_pipeline.agents.registry import (
    ADAPTERS,
    AGENT_CLIS,
    AGENTS,
    BY_KIND,
    FORMAT_KINDS,
    LLM_PROVIDERS,
    PROVIDER_ALIASES,
    PROVIDERS,
    RUNNABLE_TARGETS,
    STREAMS,
    agent_for,
    detect_stream_format,
    detect_stream_kind,
)
from evals_pipeline.enrichers import streams, tool_names
from evals_pipeline.models.events import CANONICAL_TOOLS
from evals_pipeline.models.targets import (
    AgentTarget,
    RegisteredTargets,
    TargetBase,
    canonical_target,
    registered_targets,
)

ROOT = Path(evals_pipeline.__file__).parent
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"
STREAM_FIXTURES = {
    "claude-code": "claude.jsonl",
    "codex": "codex.jsonl",
    "pi-agent": "pi.jsonl",
}


def test_each_provider_has_one_entry_with_its_target_model_and_adapter() -> None:
    assert tuple(agent.kind for agent in AGENTS) == PROVIDERS
    assert tuple(agent.target for agent in AGENTS) == RUNNABLE_TARGETS
    # The target union suites are validated against is the registry's.
    assert registered_targets() == RUNNABLE_TARGETS
    assert RegisteredTargets(TargetBase).members()[: len(AGENTS)] == RUNNABLE_TARGETS
    assert len(BY_KIND) == len(AGENTS)
    for agent in AGENTS:
        assert callable(getattr(agent.adapter, "run", None)), agent.kind


@pytest.mark.parametrize("kind", sorted(AGENT_CLIS))
def test_every_agent_cli_has_a_stream_parser_formats_and_tool_names(kind: str) -> None:
    agent = BY_KIND[kind]
    assert issubclass(agent.target, AgentTarget)
    assert agent.cli is not None and agent.cli.kind == kind and agent.cli.binary
    assert agent.stream is not None and agent.stream.formats
    names = agent.stream.tool_names.names
    assert names and set(names.values()) <= set(CANONICAL_TOOLS)
    # The parser is this agent's: its session says so, and its stream sniffs as this kind.
    text = (TRANSCRIPTS / STREAM_FIXTURES[kind]).read_text()
    session = agent.stream.parser(text, None)
    assert session.agent_kind == kind
    assert session.tool_sequence()
    assert detect_stream_format(text) in agent.stream.formats
    assert detect_stream_kind(text) == kind


def test_only_agent_clis_have_streams() -> None:
    assert set(STREAMS) == set(AGENT_CLIS)
    assert all(isinstance(adapter, AgentCliAdapter) for adapter in AGENT_CLIS.values())
    formats = [f for stream in STREAMS.values() for f in stream.formats]
    assert len(formats) == len(set(formats)) == len(FORMAT_KINDS)


def _suite_names() -> list[str]:
    names = [*PROVIDERS, *PROVIDER_ALIASES]
    return [*names, *(name.upper() for name in names), *(f" {name.title()} " for name in names)]


@pytest.mark.parametrize("written", _suite_names())
def test_every_provider_a_suite_can_name_resolves_to_exactly_one_entry(written: str) -> None:
    key = written.strip().lower()
    owners = [a for a in AGENTS if key == a.kind or key in a.agentv_aliases]
    assert len(owners) == 1, written
    # The suite loader's own spelling rule lands on the same entry.
    provider = canonical_target({"name": "t", "provider": written})["provider"]
    assert BY_KIND[provider] is owners[0] is agent_for(written)


def test_an_unknown_provider_is_no_entry() -> None:
    with pytest.raises(KeyError, match="no agent 'aider'"):
        agent_for("aider")


def test_the_per_agent_tables_are_the_registrys() -> None:
    assert runner.ADAPTERS is ADAPTERS
    assert {
        alias: agent.kind for agent in AGENTS for alias in agent.agentv_aliases
    } == PROVIDER_ALIASES
    for module, gone in [
        (identity, "AGENT_CLIS"),
        (streams, "STREAM_PARSERS"),
        (streams, "FORMAT_KINDS"),
        (tool_names, "_TABLES"),
        (tool_names, "CLAUDE_TOOLS"),
        (tool_names, "CODEX_TOOLS"),
        (tool_names, "PI_TOOLS"),
    ]:
        assert not hasattr(module, gone), f"{module.__name__}.{gone} is back"


def test_no_table_keyed_by_agent_kind_outside_the_registry() -> None:
    """A dict literal with agent kinds as keys anywhere but evals_pipeline/agents/ is a second
    registry: derive it from `agents.registry` instead. (LLM providers' SDK clients, in
    llm/clients.py, serve judges too and stay with the LLM clients.)"""
    kinds = {a.kind for a in AGENTS if a.kind not in LLM_PROVIDERS}
    kinds |= {alias for alias, kind in PROVIDER_ALIASES.items() if kind in kinds}
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.is_relative_to(ROOT / "agents"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                if len(keys & kinds) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"per-agent tables outside evals_pipeline/agents/: {found}"


def test_every_agent_module_is_registered() -> None:
    """Adding an agent is one module in evals_pipeline/agents/: one left out of the registry
    would silently not run."""
    registered = {agent.target for agent in AGENTS}
    package = Path(evals_pipeline.agents.__file__).parent
    for info in pkgutil.iter_modules([str(package)]):
        if info.name in ("kind", "registry"):
            continue
        module = importlib.import_module(f"evals_pipeline.agents.{info.name}")
        agents = getattr(module, "AGENTS", None) or [getattr(module, "AGENT", None)]
        if hasattr(module, "agent"):  # replay: built by the registry with the stream formats
            agents = [module.agent(detect_stream_kind)]
        for agent in agents:
            assert agent is not None and agent.target in registered, info.name


def test_a_target_validated_before_the_registry_is_loaded_says_so() -> None:
    """`models/` cannot import the agents: a target validated in a process that never loaded the
    registry is a loud error naming the fix, never a union missing its agents."""
    code = (
        "from pydantic import TypeAdapter\n"
        "from evals_pipeline.models.targets import TargetSpec\n"
        "TypeAdapter(TargetSpec).validate_python({'name': 'm', 'provider': 'mock'})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "importing evals_pipeline.agents.registry registers" in done.stderr, done.stderr
