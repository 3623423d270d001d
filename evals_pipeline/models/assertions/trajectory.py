"""`tool-trajectory`: the tool calls the agent should make, in which order, with which arguments.

Judged by grading/assertions/trajectory.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.assertions.base import AssertionBase


class ExpectedToolCall(BaseModel):
    """One expected step. `input` and `output` are accepted and not checked, as in AgentV
    4.42.4 (the loader warns): arguments are checked through `args`."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] | Literal["any"] | None = None
    args_match: Literal["exact", "ignore", "subset", "superset"] | list[str] | None = None
    max_duration_ms: float | None = Field(default=None, ge=0)
    input: Any = None
    output: Any = None


class ToolTrajectoryAssertion(AssertionBase):
    type: Literal["tool-trajectory"]
    mode: Literal["any_order", "in_order", "exact", "subset", "superset"] = "any_order"
    minimums: dict[str, int] = Field(default_factory=dict)
    expected: list[ExpectedToolCall] = Field(default_factory=list)
    args_match: Literal["exact", "ignore", "subset", "superset"] | list[str] = "exact"
