"""`execution-metrics`: budgets on how the run went.

Judged by grading/assertions/execution_metrics.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from evals_pipeline.models.assertions.base import AssertionBase


class ExecutionMetricsAssertion(AssertionBase):
    """Budgets on how the run went: tool calls, LLM calls, tokens, cost, duration, exploration.

    Score = passed checks ÷ checks; a metric the run did not record fails its check (AgentV).
    """

    type: Literal["execution-metrics"]
    max_tool_calls: float | None = Field(default=None, ge=0)
    max_llm_calls: float | None = Field(default=None, ge=0)
    max_tokens: float | None = Field(default=None, ge=0, description="input + output tokens")
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_duration_ms: float | None = Field(default=None, ge=0)
    target_exploration_ratio: float | None = Field(
        default=None, ge=0, description="Wanted share of read-only tool calls (Read, Grep, ...)."
    )
    exploration_tolerance: float = Field(default=0.2, ge=0)

    @model_validator(mode="after")
    def _some_threshold(self) -> ExecutionMetricsAssertion:
        limits = (
            self.max_tool_calls,
            self.max_llm_calls,
            self.max_tokens,
            self.max_cost_usd,
            self.max_duration_ms,
            self.target_exploration_ratio,
        )
        if all(limit is None for limit in limits):
            raise ValueError(
                "set at least one of max_tool_calls, max_llm_calls, max_tokens, max_cost_usd, "
                "max_duration_ms, target_exploration_ratio"
            )
        return self
