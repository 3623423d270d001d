"""Judges' token usage and cost, kept apart from the agent's own."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # the record models (grades, reports) hold usage without the LLM clients
    from evals_pipeline.llm.client import LlmReply
    from evals_pipeline.models.targets import Pricing


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


def cost_usd(
    pricing: Pricing | None, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
) -> float | None:
    """USD for one call's tokens at the target's prices; None without pricing.

    `cached_input_tokens` are part of `input_tokens` and cost `cached_input` (default: `input`).
    """
    if pricing is None:
        return None
    cached = min(cached_input_tokens, input_tokens)
    cached_price = pricing.cached_input if pricing.cached_input is not None else pricing.input
    total = (
        (input_tokens - cached) * pricing.input
        + cached * cached_price
        + output_tokens * pricing.output
    )
    return total / 1_000_000


class UsageMeter:
    """A running LlmUsage total that many threads add to (one judge step's calls)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = LlmUsage()

    def add(self, usage: LlmUsage) -> None:
        with self._lock:
            self._total = self._total + usage

    def record(self, reply: LlmReply) -> None:
        """Count one successful call."""
        self.add(LlmUsage.of(reply))

    def record_error(self) -> None:
        """Count one call that failed after its retries."""
        self.add(LlmUsage(errors=1))

    @property
    def total(self) -> LlmUsage:
        with self._lock:
            return self._total
