"""Judges' token usage and cost, kept apart from the agent's own."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.llm.client import LlmReply


class LlmUsage(BaseModel):
    """Calls, tokens and cost of judge calls (successful calls; failed ones count in `errors`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = Field(default=0, ge=0)
    errors: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, description="None when no target had pricing.")

    @classmethod
    def of(cls, reply: LlmReply) -> LlmUsage:
        return cls(
            calls=1,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=reply.cost_usd,
        )

    def __add__(self, other: LlmUsage) -> LlmUsage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return LlmUsage(
            calls=self.calls + other.calls,
            errors=self.errors + other.errors,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=sum(costs) if costs else None,
        )
