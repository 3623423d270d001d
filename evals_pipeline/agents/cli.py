"""AgentV's `cli` provider: any command, its answer in an output file or on stdout."""

from __future__ import annotations

from evals_pipeline.adapters.cli import CliAdapter
from evals_pipeline.agents.kind import AgentKind
from evals_pipeline.models.targets import CliTarget

AGENT = AgentKind(target=CliTarget, adapter=CliAdapter())
