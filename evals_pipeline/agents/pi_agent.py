"""pi: `pi --mode json -p`, or its session file."""

from __future__ import annotations

from evals_pipeline.adapters.pi_agent import PiAgentAdapter
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.pi_agent import TOOL_NAMES, parse_pi
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.targets import PiAgentTarget


def _parse(text: str, _session_file: str | None) -> EnrichedSession:
    return parse_pi(text)


AGENT = AgentKind(
    target=PiAgentTarget,
    adapter=PiAgentAdapter(),
    stream=AgentStream(formats=("pi-json", "pi-session"), parser=_parse, tool_names=TOOL_NAMES),
)
