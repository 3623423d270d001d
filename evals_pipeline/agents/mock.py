"""`mock`: a fixed response, to check suites and graders without an agent."""

from __future__ import annotations

from evals_pipeline.adapters.mock import MockAdapter
from evals_pipeline.agents.kind import AgentKind
from evals_pipeline.models.targets import MockTarget

AGENT = AgentKind(target=MockTarget, adapter=MockAdapter())
