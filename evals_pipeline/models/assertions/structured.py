"""Structured-answer assertions: `is-json` and `field-accuracy` with its per-field specs.

Judged by grading/assertions/structured.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.assertions.base import AssertionBase


class IsJsonAssertion(AssertionBase):
    type: Literal["is-json"]


class FieldSpec(BaseModel):
    """One field to compare. As in AgentV, `match` must be given and a field is required unless
    `required: false` (a missing optional field then weighs nothing)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    match: Literal["exact", "numeric_tolerance", "date"]
    required: bool = True
    weight: float = Field(default=1.0, ge=0)
    tolerance: float = 0.0
    relative: bool = False
    formats: list[str] = Field(default_factory=list)


class FieldAccuracyAssertion(AssertionBase):
    type: Literal["field-accuracy"]
    fields: list[FieldSpec] = Field(min_length=1)
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"
