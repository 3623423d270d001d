"""Adapters run an agent on a resolved case. Adding an agent is one module and one entry here."""

from __future__ import annotations

from evals_pipeline.adapters.base import Adapter, RunContext
from evals_pipeline.adapters.cli import CliAdapter
from evals_pipeline.adapters.mock import MockAdapter
from evals_pipeline.adapters.replay import ReplayAdapter
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.workspaces import create_workspace

ADAPTERS: dict[str, Adapter] = {
    "cli": CliAdapter(),
    "mock": MockAdapter(),
    "replay": ReplayAdapter(),
}


def run_agent(case: ResolvedCase, ctx: RunContext) -> AgentRun:
    """Run `case` once in a fresh workspace with the adapter of its target's provider."""
    ctx.artifacts.mkdir(parents=True, exist_ok=True)
    create_workspace(ctx.workspace, case.workspace_template)
    return ADAPTERS[case.target.provider].run(case, ctx)


__all__ = ["ADAPTERS", "Adapter", "RunContext", "run_agent"]
