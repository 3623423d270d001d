"""Judges' token usage and cost, kept apart from the agent's own."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from evals_pipeline.models.usage import LlmUsage

if TYPE_CHECKING:
    from evals_pipeline.llm.client import LlmReply
    from evals_pipeline.models.targets import Pricing


def usage_of(reply: LlmReply) -> LlmUsage:
    """The usage of one successful call."""
    return LlmUsage(
        calls=1,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        cost_usd=reply.cost_usd,
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
        self.add(usage_of(reply))

    def record_error(self) -> None:
        """Count one call that failed after its retries."""
        self.add(LlmUsage(errors=1))

    @property
    def total(self) -> LlmUsage:
        with self._lock:
            return self._total
