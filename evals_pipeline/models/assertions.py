"""Assertion (grader) specs as written in a suite, one pydantic model per AgentV assertion type.

`AssertionSpec` is a discriminated union on the kebab-case `type`; snake_case types are accepted
and normalised, as AgentV does.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Annotated, Any, Literal, get_args

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


class PreprocessorSpec(BaseModel):
    """Turns a file in the agent's answer into text for LLM graders (AgentV's preprocessors).

    `type` is a MIME type or a short alias (`xlsx`, `pdf`, `csv`, ...); `command` is an argv
    whose last item is a script file, found like AgentV finds it (from the eval file's folder
    up) and made absolute at load time. It reads `{path, original_path, media_type}` on stdin
    and prints the text.
    """

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1)
    command: list[str] = Field(min_length=1)


MIME_TYPE_ALIASES: dict[str, str] = {
    "csv": "text/csv",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "htm": "text/html",
    "html": "text/html",
    "json": "application/json",
    "markdown": "text/markdown",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "sql": "application/sql",
    "txt": "text/plain",
    "xhtml": "application/xhtml+xml",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
}
"""AgentV's short names for media types."""


def normalize_media_type(value: str) -> str:
    """A preprocessor `type` or a block's `media_type` in the form they are matched by."""
    normalized = value.strip().lower()
    return MIME_TYPE_ALIASES.get(normalized, normalized)


def merge_preprocessors(
    defaults: list[PreprocessorSpec], own: list[PreprocessorSpec]
) -> list[PreprocessorSpec]:
    """The suite's preprocessors with a grader's own, one per media type (the grader's wins)."""
    merged: dict[str, PreprocessorSpec] = {}
    for spec in [*defaults, *own]:
        merged[normalize_media_type(spec.type)] = spec
    return list(merged.values())


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
    preprocessors: list[PreprocessorSpec] = Field(
        default_factory=list,
        description="Accepted as AgentV does; AgentV's code graders do not use them either.",
    )
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
        return _extras_into_config(self)

    def display_name(self) -> str:
        return self.name or "code-grader"


RubricOperator = Literal["correctness", "contradiction"]
"""How a checklist criterion is judged (AgentV): `correctness` needs the answer to support the
outcome; `contradiction` is satisfied unless the answer contradicts it."""

SCORE_MIN, SCORE_MAX = 0, 10
"""A score-range criterion is scored by the model as an integer in 0..10 (AgentV)."""


class ScoreRange(BaseModel):
    """One band of an analytic criterion: the integer scores it spans and what they mean."""

    model_config = ConfigDict(extra="forbid")

    score_range: tuple[
        Annotated[int, Field(ge=SCORE_MIN, le=SCORE_MAX, strict=True)],
        Annotated[int, Field(ge=SCORE_MIN, le=SCORE_MAX, strict=True)],
    ] = Field(description="[min, max], integers in 0..10, min <= max.")
    outcome: str = Field(min_length=1, description="What an answer in this band looks like.")

    @model_validator(mode="after")
    def _ordered(self) -> ScoreRange:
        low, high = self.score_range
        if low > high:
            raise ValueError(
                f"score_range [{low}, {high}]: min must be <= max; write [{high}, {low}]"
            )
        return self


class RubricItem(BaseModel):
    """One criterion an LLM grader checks: satisfied or not, weighted, possibly required.

    AgentV's plain-string items become `{id: rubric-N, outcome: <text>}`. With `score_ranges`
    the criterion is analytic: the model scores it 0..10 and the grader averages those scores.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    outcome: str | None = Field(
        default=None,
        min_length=1,
        description="What must be true of the answer; optional with score_ranges.",
    )
    operator: RubricOperator | None = Field(
        default=None, description="`correctness` or `contradiction`: how the judge reads it."
    )
    weight: float = Field(default=1.0, ge=0)
    required: bool | None = Field(
        default=None,
        description="A required criterion that is unsatisfied (or below its gate) fails the "
        "grader; unset, AgentV makes a checklist criterion required and a banded one not.",
    )
    min_score: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Score-range mode: the lowest score/10 that passes; checklist mode ignores "
        "it (AgentV 4.42.4: only `required` fails the grader there).",
    )
    score_ranges: list[ScoreRange] | None = Field(
        default=None,
        description="Analytic bands covering 0..10 without overlap; also written as a map "
        "{lower bound: outcome} starting at 0.",
    )

    @field_validator("score_ranges", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return score_ranges_shorthand(value)

    @model_validator(mode="after")
    def _complete(self) -> RubricItem:
        if self.score_ranges is None:
            if self.outcome is None:
                raise ValueError(
                    f"criterion '{self.id}' has no outcome: add outcome: <what must be true>, "
                    "or score_ranges"
                )
            return self
        check_score_ranges(self.score_ranges)
        return self

    @property
    def must_pass(self) -> bool:
        """`required`, defaulted as AgentV does: a checklist criterion is required unless it
        says `required: false`, a criterion with score_ranges only when it says `required: true`."""
        return self.required if self.required is not None else self.score_ranges is None

    @property
    def score_gate(self) -> float | None:
        """Score-range mode: the lowest score/10 that does not fail the grader (AgentV: the
        min_score, else 10/10 when the criterion must pass, else no gate)."""
        if self.min_score is not None:
            return self.min_score
        return 1.0 if self.must_pass else None


def score_ranges_shorthand(value: Any) -> Any:
    """AgentV's `{0: Bad, 3: OK, 7: Good}`: each key a lower bound, up to the next key - 1."""
    if not isinstance(value, dict) or not value:
        return value
    bounds: dict[int, Any] = {}
    for key, outcome in value.items():
        try:
            bound = int(str(key))
        except ValueError:
            return value
        if not SCORE_MIN <= bound <= SCORE_MAX or not isinstance(outcome, str) or not outcome:
            return value
        bounds[bound] = outcome
    keys = sorted(bounds)
    if keys[0] != SCORE_MIN:
        raise ValueError(
            f"score_ranges shorthand map must start at 0 (got {keys[0]}): add 0: <outcome>"
        )
    highs = [*(k - 1 for k in keys[1:]), SCORE_MAX]
    return [{"score_range": [k, h], "outcome": bounds[k]} for k, h in zip(keys, highs, strict=True)]


def check_score_ranges(ranges: list[ScoreRange]) -> None:
    """AgentV's rules: bands do not overlap and together cover every integer 0..10."""
    ordered = sorted(ranges, key=lambda r: r.score_range[0])
    for previous, current in pairwise(ordered):
        if current.score_range[0] <= previous.score_range[1]:
            raise ValueError(
                f"score_ranges {list(previous.score_range)} and {list(current.score_range)} "
                "overlap: make each score belong to one band"
            )
    covered = {n for r in ranges for n in range(r.score_range[0], r.score_range[1] + 1)}
    missing = [str(n) for n in range(SCORE_MIN, SCORE_MAX + 1) if n not in covered]
    if missing:
        raise ValueError(
            f"score_ranges miss the scores {', '.join(missing)}: the bands must cover every "
            "integer 0..10"
        )


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
    max_steps: int | None = Field(
        default=None,
        ge=1,
        le=50,
        description="Accepted, no effect: AgentV 4.42.4 bounds only its built-in grader agent "
        "(`provider: agentv`, not run here) with it; every other grader target ignores it.",
    )
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


class ExecutionMetricsAssertion(AssertionBase):
    """Budgets on how the run went: tool calls, LLM calls, tokens, cost, duration, exploration.

    Score = passed checks ÷ checks; a metric the run did not record fails its check (AgentV).
    """

    type: Literal["execution-metrics"]
    max_tool_calls: float | None = Field(default=None, ge=0)
    max_llm_calls: float | None = Field(default=None, ge=0)
    max_tokens: float | None = Field(default=None, ge=0, description="input + output tokens")
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_duration_ms: float | None = Field(default=None, ge=0)
    target_exploration_ratio: float | None = Field(
        default=None, ge=0, description="Wanted share of read-only tool calls (Read, Grep, ...)."
    )
    exploration_tolerance: float = Field(default=0.2, ge=0)

    @model_validator(mode="after")
    def _some_threshold(self) -> ExecutionMetricsAssertion:
        limits = (
            self.max_tool_calls,
            self.max_llm_calls,
            self.max_tokens,
            self.max_cost_usd,
            self.max_duration_ms,
            self.target_exploration_ratio,
        )
        if all(limit is None for limit in limits):
            raise ValueError(
                "set at least one of max_tool_calls, max_llm_calls, max_tokens, max_cost_usd, "
                "max_duration_ms, target_exploration_ratio"
            )
        return self


class SkillTriggerAssertion(AssertionBase):
    """Whether the agent used a skill: a canonical `Skill` call naming it, or a `Read` of
    `skills/<skill>/...` (or a tool result mentioning that path)."""

    type: Literal["skill-trigger"]
    skill: str = Field(min_length=1)
    should_trigger: bool = True

    def display_name(self) -> str:
        return self.name or f"skill-trigger-{self.skill}"


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


class CompositeAssertion(AssertionBase):
    """Several named graders combined into one score by an aggregator; members may nest.

    As in AgentV 4.42.4 a member's own weight, required, min_score and negate do not apply
    inside a composite (the loader warns); weights go in `aggregator.weights`.
    """

    type: Literal["composite"]
    assertions: list[AssertionSpec] = Field(min_length=1)
    aggregator: Aggregator

    def display_name(self) -> str:
        return self.name or "composite"


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

    _extras = model_validator(mode="after")(lambda self: _extras_into_config(self))

    @property
    def kind(self) -> str:
        return self.custom_type

    def display_name(self) -> str:
        return self.name or self.custom_type


def _extras_into_config(spec: Any) -> Any:
    extra = dict(spec.__pydantic_extra__ or {})
    if extra:
        spec.config = {**extra, **spec.config}
        spec.__pydantic_extra__ = {}
    return spec


AssertionSpec = Annotated[
    TextAssertion
    | TextSetAssertion
    | RegexAssertion
    | IsJsonAssertion
    | LatencyAssertion
    | CostAssertion
    | TokenUsageAssertion
    | ExecutionMetricsAssertion
    | ToolTrajectoryAssertion
    | FieldAccuracyAssertion
    | SkillTriggerAssertion
    | FileChangesAssertion
    | CodeGraderAssertion
    | LlmGraderAssertion
    | RubricsAssertion
    | CompositeAssertion
    | CustomAssertion,
    Field(discriminator="type"),
]
"""Every assertion model; the one place a new assertion type is declared (its `type` literal)."""

CompositeAssertion.model_rebuild()

ASSERTION_SPECS: tuple[type[AssertionBase], ...] = get_args(get_args(AssertionSpec)[0])
"""The assertion models, in the union's order."""


def spec_types(spec: type[AssertionBase]) -> tuple[str, ...]:
    """The `type` values an assertion model accepts."""
    return get_args(spec.model_fields["type"].annotation)


ASSERTION_TYPES: tuple[str, ...] = tuple(
    kind for spec in ASSERTION_SPECS if spec is not CustomAssertion for kind in spec_types(spec)
)
"""The built-in types a suite may write (custom types come from grader files)."""


def walk_assertions(
    assertions: list[AssertionSpec], path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], AssertionSpec]]:
    """Every assertion with its data path, composite members included (depth first)."""
    for index, assertion in enumerate(assertions):
        at = (*path, index)
        yield at, assertion
        if isinstance(assertion, CompositeAssertion):
            yield from walk_assertions(assertion.assertions, (*at, "assertions"))


def normalize_assertion_type(value: Any) -> Any:
    """AgentV accepts snake_case types (`code_grader`); the canonical form is kebab-case."""
    return value.replace("_", "-") if isinstance(value, str) else value
