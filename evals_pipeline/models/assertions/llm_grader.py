"""`llm-grader` and `rubrics`: an LLM judges the answer, with a score or a rubric checklist.

Judged by grading/llm_grader.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals_pipeline.models.assertions.base import AssertionBase
from evals_pipeline.models.assertions.preprocessing import PreprocessorSpec


class RubricItem(BaseModel):
    """One criterion an LLM grader checks: satisfied or not, weighted, possibly required.

    AgentV's plain-string items become `{id: rubric-N, outcome: <text>}`.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    outcome: str = Field(min_length=1, description="What must be true of the answer.")
    weight: float = Field(default=1.0, ge=0)
    required: bool = Field(
        default=True,
        description="An unsatisfied required criterion fails the grader; AgentV makes every "
        "criterion required unless it says `required: false`.",
    )
    min_score: float | None = Field(
        default=None, gt=0, le=1, description="Checklist mode: any min_score makes it required."
    )

    @property
    def is_required(self) -> bool:
        return self.required or self.min_score is not None


def _unique_ids(items: list[RubricItem]) -> list[RubricItem]:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"rubric id '{item.id}' is used twice; give each criterion its own id")
        seen.add(item.id)
    return items


def _rubric_items(value: Any) -> Any:
    """AgentV accepts bare strings as rubric items; they get ids by position."""
    if not isinstance(value, list):
        return value
    return [
        {"id": f"rubric-{index + 1}", "outcome": item} if isinstance(item, str) else item
        for index, item in enumerate(value)
    ]


PROMPT_FILE_PREFIX = "file://"


class LlmGraderBase(AssertionBase):
    """What `llm-grader` and `rubrics` share: the prompt, the judge and its sampling."""

    prompt: str | None = Field(
        default=None,
        description="Inline text, or `file://path` (relative to the eval file). With "
        "{{variables}} it replaces the default template; without, it is the criteria.",
    )
    target: str | None = Field(
        default=None, description="The LLM target to ask; default: the case's grader target."
    )
    model: str | None = Field(default=None, description="Override of the target's model.")
    temperature: float | None = Field(default=None, ge=0, le=2)
    config: dict[str, Any] = Field(default_factory=dict)
    preprocessors: list[PreprocessorSpec] = Field(
        default_factory=list,
        description="File-to-text converters for the answer's file blocks; the suite's "
        "`preprocessors` are added at resolve time (this grader's win for the same type).",
    )

    @field_validator("prompt", mode="before")
    @classmethod
    def _no_executable_prompt(cls, value: Any) -> Any:
        if isinstance(value, dict) and ("command" in value or "script" in value):
            raise ValueError(
                "executable prompt templates ({command: [...]}) are not supported; write the "
                "prompt inline or as file://path"
            )
        return value

    @property
    def prompt_file(self) -> str | None:
        """The prompt file's path when the prompt is `file://...`, else None."""
        if self.prompt is not None and self.prompt.startswith(PROMPT_FILE_PREFIX):
            return self.prompt[len(PROMPT_FILE_PREFIX) :]
        return None

    @property
    def rubric_items(self) -> list[RubricItem]:
        return []

    def client_key(self, default_target: str | None) -> str | None:
        """The name of the LLM client this grader asks: its target, `@model` when overridden."""
        target = self.target or default_target
        if target is None:
            return None
        return f"{target}@{self.model}" if self.model else target


class LlmGraderAssertion(LlmGraderBase):
    """An LLM judges the answer: a score with checked statements, or a rubric checklist."""

    type: Literal["llm-grader"]
    rubrics: list[RubricItem] = Field(
        default_factory=list, description="Criteria for rubric mode; strings are accepted."
    )

    _items = field_validator("rubrics", mode="before")(_rubric_items)
    _unique = field_validator("rubrics")(_unique_ids)

    @property
    def rubric_items(self) -> list[RubricItem]:
        return self.rubrics

    def display_name(self) -> str:
        return self.name or "llm-grader"


class RubricsAssertion(LlmGraderBase):
    """AgentV's `rubrics` type: an llm-grader in rubric mode over `criteria`."""

    type: Literal["rubrics"]
    criteria: list[RubricItem] = Field(min_length=1)

    _items = field_validator("criteria", mode="before")(_rubric_items)
    _unique = field_validator("criteria")(_unique_ids)

    @property
    def rubric_items(self) -> list[RubricItem]:
        return self.criteria

    def display_name(self) -> str:
        return self.name or "rubrics"


LLM_GRADER_TYPES: tuple[str, ...] = ("llm-grader", "rubrics")
