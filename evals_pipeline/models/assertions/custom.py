"""Custom assertion types: a grader file in `.agentv/assertions/` (or graders/, judges/) named by its type.

Run by grading/assertions/custom.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from evals_pipeline.models.assertions.base import AssertionBase, extras_into_config


class CustomAssertion(AssertionBase):
    """A type found as a file in `.agentv/assertions/`, `.agentv/graders/` or `.agentv/judges/`
    (searched from the eval file's folder up), run as a code grader; unknown keys go to `config`.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    type: Literal["custom"]
    custom_type: str = Field(description="The type as written, the grader file's stem.")
    command: list[str] = Field(min_length=1, description="How the grader file is run.")
    cwd: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=60.0, gt=0)

    _extras = model_validator(mode="after")(lambda self: extras_into_config(self))

    @property
    def kind(self) -> str:
        return self.custom_type

    def display_name(self) -> str:
        return self.name or self.custom_type
