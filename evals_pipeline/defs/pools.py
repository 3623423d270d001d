"""The Dagster pool of the agent step: per agent provider, so a deployment limits how many
steps run e.g. Claude Code at once across all runs (docs/suite-format.md, "Provider limits")."""

from __future__ import annotations

from evals_pipeline.suites import LoadedSuite

AGENTS_POOL = "evals_agents"


def agent_pool(loaded: LoadedSuite) -> str:
    """`evals_agents_<provider>` when every agent of the suite has one provider (e.g.
    `evals_agents_claude_code`); else `evals_agents`, as a step holds only one pool."""
    providers = {target.provider for target in loaded.targets.values()}
    if len(providers) == 1:
        return f"{AGENTS_POOL}_{providers.pop().replace('-', '_')}"
    return AGENTS_POOL
