"""Judges' token usage and cost as records hold it (grades, reports), kept apart from the agent's
own; the LLM clients that count it are in llm/usage.py."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field


class LlmUsage(BaseModel):
    """Calls, tokens and cost of judge calls (successful calls; failed ones count in `errors`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = Field(default=0, ge=0)
    errors: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, description="None when no target had pricing.")

    @classmethod
    def total(cls, usages: Iterable[LlmUsage]) -> LlmUsage:
        """The sum of `usages`, as `+` gives it, made once (not a model per addition)."""
        return cls.summed(
            (u.calls, u.errors, u.input_tokens, u.output_tokens, u.cost_usd) for u in usages
        )

    @classmethod
    def summed(cls, rows: Iterable[tuple[int, int, int, int, float | None]]) -> LlmUsage:
        """The sum of (calls, errors, input tokens, output tokens, cost) rows: the known costs
        added up in order, None when none is known."""
        calls = errors = input_tokens = output_tokens = 0
        cost: float | None = None
        for c, e, i, o, usd in rows:
            calls, errors = calls + c, errors + e
            input_tokens, output_tokens = input_tokens + i, output_tokens + o
            if usd is not None:
                cost = usd if cost is None else cost + usd
        return cls(
            calls=calls,
            errors=errors,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
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
