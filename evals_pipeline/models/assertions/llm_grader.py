"""`llm-grader` and `rubrics`: an LLM judges the answer, with a score or a rubric checklist.

Judged by grading/llm_grader.py, with the prompts of grading/llm_prompt.py.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evals_pipeline.models.assertions.base import AssertionBase, extras_into_config
from evals_pipeline.models.assertions.preprocessing import PreprocessorSpec

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


class PromptCommand(BaseModel):
    """`prompt: {command: [...], config: {...}}`: AgentV's executable prompt template, a program
    that reads the code-grader payload on stdin and prints the grader's prompt (grading/
    prompt_template.py runs it)."""

    model_config = ConfigDict(extra="forbid")

    command: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1,
        description="argv; the last item is the script, found like an input file and run from "
        "its own folder.",
    )
    config: dict[str, Any] | None = Field(
        default=None,
        description="The payload's `config`; unset, the grader's own `config` is sent.",
    )

    @model_validator(mode="before")
    @classmethod
    def _script_alias(cls, data: Any) -> Any:
        # AgentV's deprecated spelling; `command` wins when both are written.
        if isinstance(data, dict) and "script" in data:
            data = dict(data)
            script = data.pop("script")
            data.setdefault("command", script)
        return data

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        if isinstance(value, str):
            argv = ", ".join(value.split())
            raise ValueError(
                f"prompt.command must be a list of argv tokens: write command: [{argv}]"
            )
        return value

    @property
    def script(self) -> str:
        """The script the command runs: its last item (AgentV resolves that one)."""
        return self.command[-1]


class LlmGraderBase(AssertionBase):
    """What `llm-grader` and `rubrics` share: the prompt, the judge and its sampling."""

    prompt: str | PromptCommand | None = Field(
        default=None,
        description="Inline text, `file://path` (relative to the eval file), or `{command: "
        "[...]}`, a program printing the prompt. With {{variables}} (always, for a file or a "
        "command) it replaces the default template; otherwise it is the criteria.",
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

    @property
    def prompt_file(self) -> str | None:
        """The prompt file's path when the prompt is `file://...`, else None."""
        if isinstance(self.prompt, str) and self.prompt.startswith(PROMPT_FILE_PREFIX):
            return self.prompt[len(PROMPT_FILE_PREFIX) :]
        return None

    @property
    def prompt_command(self) -> PromptCommand | None:
        """The executable prompt template, when the prompt is one."""
        return self.prompt if isinstance(self.prompt, PromptCommand) else None

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
    _id_into_config = model_validator(mode="after")(lambda self: extras_into_config(self))

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
