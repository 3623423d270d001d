"""Assertion (grader) specs as written in a suite, one pydantic model per AgentV assertion type.

`AssertionSpec` is a discriminated union on the kebab-case `type`; snake_case types are accepted
and normalised, as AgentV does.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class AssertionBase(BaseModel):
    """Fields every assertion shares: identity, weighting and the required gate."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
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

    def display_name(self) -> str:
        """The grader's name: the one given, else the type and its value (AgentV's rule)."""
        if self.name:
            return self.name
        kind: str = getattr(self, "type", "assertion")
        value = getattr(self, "value", None)
        if isinstance(value, str) and len(value) <= 40:
            return f"{kind}-{value}"
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


class TextAssertion(AssertionBase):
    type: Literal["contains", "icontains", "equals", "starts-with", "ends-with"]
    value: str


class TextSetAssertion(AssertionBase):
    type: Literal["contains-any", "contains-all", "icontains-any", "icontains-all"]
    value: list[str] = Field(min_length=1)


class RegexAssertion(AssertionBase):
    type: Literal["regex"]
    value: str
    flags: str = ""


class IsJsonAssertion(AssertionBase):
    type: Literal["is-json"]


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


class ExpectedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] | Literal["any"] | None = None
    args_match: Literal["exact", "ignore", "subset", "superset"] | list[str] | None = None
    max_duration_ms: int | None = None


class ToolTrajectoryAssertion(AssertionBase):
    type: Literal["tool-trajectory"]
    mode: Literal["any_order", "in_order", "exact", "subset", "superset"] = "any_order"
    minimums: dict[str, int] = Field(default_factory=dict)
    expected: list[ExpectedToolCall] = Field(default_factory=list)
    args_match: Literal["exact", "ignore", "subset", "superset"] | list[str] = "exact"


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    match: Literal["exact", "numeric_tolerance", "date"] = "exact"
    required: bool = False
    weight: float = Field(default=1.0, ge=0)
    tolerance: float = 0.0
    relative: bool = False
    formats: list[str] = Field(default_factory=list)


class FieldAccuracyAssertion(AssertionBase):
    type: Literal["field-accuracy"]
    fields: list[FieldSpec] = Field(min_length=1)
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"


DEFAULT_PROXY_MAX_CALLS = 50


class TargetProxyLimits(BaseModel):
    """`target: {max_calls: N}` on a code grader: the proxy, with its own call budget."""

    model_config = ConfigDict(extra="forbid")

    max_calls: int = Field(default=DEFAULT_PROXY_MAX_CALLS, ge=1)


class CodeGraderAssertion(AssertionBase):
    """A grader program speaking AgentV's stdin/stdout contract; unknown keys go into `config`."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    type: Literal["code-grader"]
    command: str | list[str]
    cwd: str | None = None
    timeout_seconds: float = Field(default=60.0, gt=0)
    messages_format: Literal["parquet", "json"] = "parquet"
    config: dict[str, Any] = Field(default_factory=dict)
    target: bool | TargetProxyLimits = Field(
        default=False,
        description="`true` or `{max_calls: N}`: the grader may ask the case's grader target "
        "(an LLM) questions through a loopback proxy (AGENTV_TARGET_PROXY_URL / _TOKEN); "
        "default budget 50 calls.",
    )

    @property
    def proxy_max_calls(self) -> int | None:
        """The proxy's call budget when the grader uses the target proxy, else None."""
        if isinstance(self.target, TargetProxyLimits):
            return self.target.max_calls
        return DEFAULT_PROXY_MAX_CALLS if self.target else None

    @model_validator(mode="before")
    @classmethod
    def _script_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "script" in data and "command" not in data:
            data = {**data, "command": data["script"]}
            del data["script"]
        return data

    @model_validator(mode="after")
    def _extras_into_config(self) -> CodeGraderAssertion:
        extra = dict(self.__pydantic_extra__ or {})
        if extra:
            self.config = {**extra, **self.config}
            self.__pydantic_extra__ = {}
        return self

    def display_name(self) -> str:
        return self.name or "code-grader"


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


class FileChangesAssertion(AssertionBase):
    """Which workspace files the agent added, modified or deleted (from `file_changes`).

    Not an AgentV type: AgentV leaves this to code graders. Paths are relative to the workspace
    and may be globs (`src/*.py`).
    """

    type: Literal["file-changes"]
    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(
        default_factory=list, description="Paths the agent must leave alone."
    )
    only: bool = Field(
        default=False, description="Fail when any file outside added/modified/deleted changed."
    )


AssertionSpec = Annotated[
    TextAssertion
    | TextSetAssertion
    | RegexAssertion
    | IsJsonAssertion
    | LatencyAssertion
    | CostAssertion
    | TokenUsageAssertion
    | ToolTrajectoryAssertion
    | FieldAccuracyAssertion
    | FileChangesAssertion
    | CodeGraderAssertion
    | LlmGraderAssertion
    | RubricsAssertion,
    Field(discriminator="type"),
]

ASSERTION_TYPES: tuple[str, ...] = (
    "contains",
    "icontains",
    "equals",
    "starts-with",
    "ends-with",
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
    "regex",
    "is-json",
    "latency",
    "cost",
    "token-usage",
    "tool-trajectory",
    "field-accuracy",
    "file-changes",
    "code-grader",
    "llm-grader",
    "rubrics",
)


def normalize_assertion_type(value: Any) -> Any:
    """AgentV accepts snake_case types (`code_grader`); the canonical form is kebab-case."""
    return value.replace("_", "-") if isinstance(value, str) else value
