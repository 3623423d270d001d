"""The eval report: per-agent figures over a suite's graded cases."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AgentSummary(BaseModel):
    """One agent's figures. Rates exclude errors (AgentV's rule); errors are counted apart."""

    agent: str
    cases: int
    passed: int
    failed: int
    errors: int
    pass_rate: float | None = Field(
        description="passed / (passed + failed); None when no case graded"
    )
    mean_score: float | None = Field(description="Mean score over cases that did not error")
    cost_usd: float = 0.0
    total_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    mean_duration_ms: float | None = None
    llm_calls: int = 0
    tool_calls: dict[str, int] = Field(default_factory=dict, description="Calls per tool, summed.")
    milestone_ms: dict[str, float] = Field(
        default_factory=dict,
        description="Median time from session start to each milestone, over trials reaching it.",
    )
    milestone_trials: dict[str, int] = Field(
        default_factory=dict, description="How many trials reached each milestone."
    )


class CaseFailure(BaseModel):
    """Why one (case, agent) did not pass, in a line."""

    agent: str
    test_id: str
    verdict: str
    reason: str


class EvalReport(BaseModel):
    suite: str
    created_ms: int
    run_id: str | None = None
    agents: list[AgentSummary]
    not_run: int = Field(
        default=0, description="Registered (case, agent) partitions with no grades"
    )
    failures: list[CaseFailure] = Field(default_factory=list)

    @property
    def all_passed(self) -> bool:
        return all(a.failed == 0 and a.errors == 0 for a in self.agents) and self.not_run == 0
