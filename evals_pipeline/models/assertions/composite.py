"""A composite's aggregators: how its members' scores become one.

Run by grading/composite.py; `CompositeAssertion` itself nests the union, so it is declared
with it in `spec`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class WeightedAverageAggregator(BaseModel):
    """Mean of the members' scores, weighted by member name (default weight 1)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["weighted_average"]
    weights: dict[str, float] = Field(default_factory=dict)


class ThresholdAggregator(BaseModel):
    """Score = share of members whose verdict is pass; the composite passes at `threshold`."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["threshold"]
    threshold: float = Field(ge=0, le=1)


class CodeAggregator(BaseModel):
    """A program reads `{results: {member: {score, verdict, assertions, ...}}}` on stdin and
    prints `{score, verdict?, assertions?}`; `path` is a shell command run in the eval file's
    folder (AgentV's rule)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["code-grader"]
    path: str = Field(min_length=1)
    cwd: str | None = Field(
        default=None, description="Resolved to the eval file's folder; AgentV ignores it."
    )
    timeout_seconds: float = Field(default=60.0, gt=0)


class LlmAggregator(BaseModel):
    """An LLM reads the members' results (`{{EVALUATOR_RESULTS_JSON}}`) and gives the score."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["llm-grader"]
    prompt: str | None = Field(
        default=None, description="Inline text or file://path; default: AgentV's prompt."
    )
    model: str | None = None
    target: str | None = None


Aggregator = Annotated[
    WeightedAverageAggregator | ThresholdAggregator | CodeAggregator | LlmAggregator,
    Field(discriminator="type"),
]
