"""Budget assertions on one run: `latency`, `cost`, `token-usage`.

Judged by grading/assertions/metrics.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evals_pipeline.models.assertions.base import AssertionBase


class LatencyAssertion(AssertionBase):
    type: Literal["latency"]
    threshold: float = Field(gt=0, description="Maximum duration in milliseconds.")


class CostAssertion(AssertionBase):
    type: Literal["cost"]
    budget: float = Field(ge=0, description="Maximum cost in USD.")


class TokenUsageAssertion(AssertionBase):
    type: Literal["token-usage"]
    max_total: int | None = None
    max_input: int | None = None
    max_output: int | None = None
