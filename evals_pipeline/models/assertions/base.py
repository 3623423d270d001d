"""The fields every assertion shares (identity, weight, the required gate) and AgentV's naming rule."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AssertionBase(BaseModel):
    """Fields every assertion shares: identity, weighting and the required gate."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
    id: str | int | None = Field(
        default=None,
        description="Accepted for AgentV 4.42.4 suites, which use it for nothing: the grader's "
        "name stays `name` (or the derived one). Like AgentV, graders with a `config` (code "
        "graders, custom types, llm-grader) carry it there.",
    )
    weight: float = Field(default=1.0, ge=0)
    required: bool | float = False
    min_score: float | None = Field(default=None, gt=0, le=1)
    negate: bool = False

    @field_validator("required")
    @classmethod
    def _required_range(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not 0 < value <= 1:
            raise ValueError("required must be true/false or a number in (0, 1]")
        return value

    @property
    def kind(self) -> str:
        """The assertion type as the user wrote it (a custom type keeps its own name)."""
        kind: str = getattr(self, "type", "assertion")
        return kind

    def display_name(self) -> str:
        """The grader's name: the one given, else the type and its value (AgentV's rule)."""
        if self.name:
            return self.name
        kind = self.kind
        value = getattr(self, "value", None)
        if isinstance(value, str):
            return f"{kind}-{value[:30]}" if kind == "regex" else f"{kind}-{value}"
        if isinstance(value, list):
            return f"{kind}-{len(value)}"
        return kind

    def gate(self, threshold: float) -> float | None:
        """The score below which a required grader forces the test score to 0; None if not required."""
        if self.required is False:
            return None
        if self.min_score is not None:
            return self.min_score
        if self.required is not True:
            return float(self.required)
        return threshold


def extras_into_config(spec: Any) -> Any:
    """Move a model's unknown keys, and its `id`, into its `config`: AgentV passes every key it
    does not know on to code graders, custom types and prompt templates that way."""
    extra = dict(spec.__pydantic_extra__ or {})
    if spec.id is not None:
        extra = {"id": spec.id, **extra}
    if extra:
        spec.config = {**extra, **spec.config}
    if spec.__pydantic_extra__:
        spec.__pydantic_extra__ = {}
    return spec
