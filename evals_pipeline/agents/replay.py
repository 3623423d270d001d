"""`replay`: recorded sessions graded without running an agent. A recorded agent CLI stream is
told apart by the other agents' stream formats, so the registry hands those in."""

from __future__ import annotations

from collections.abc import Callable

from evals_pipeline.adapters.replay import ReplayAdapter
from evals_pipeline.agents.kind import AgentKind
from evals_pipeline.models.targets import ReplayTarget


def agent(stream_kind: Callable[[str], str | None]) -> AgentKind:
    """The replay agent; `stream_kind` names the agent that wrote a recorded stream, or None."""
    return AgentKind(target=ReplayTarget, adapter=ReplayAdapter(stream_kind))
