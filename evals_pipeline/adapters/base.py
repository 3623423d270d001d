"""What every adapter gives the pipeline: one agent run of one case, recorded as an AgentRun."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun


@dataclass(frozen=True)
class RunContext:
    """Where one run keeps its files: `artifacts` for what it records, `workspace` for the agent."""

    artifacts: Path
    workspace: Path
    trial: int = 0
    run_id: str | None = None
    """The pipeline run this agent run belongs to (hooks get it as `eval_run_id`)."""
    git_cache: Path | None = None
    """Where repositories named by URL are cloned once, for worktrees; default: beside the run."""

    @property
    def stdout_path(self) -> Path:
        return self.artifacts / "stdout.txt"

    @property
    def output_path(self) -> Path:
        return self.artifacts / "output.json"

    @property
    def prompt_path(self) -> Path:
        return self.artifacts / "prompt.md"


class Adapter(Protocol):
    """Runs an agent on a case. Failures are returned as data (AgentRun.error), never raised."""

    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun: ...
