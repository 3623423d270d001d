"""`AssertionSpec`: the one discriminated union on `type` a suite's assertions validate against.

A new assertion type joins the union here; its model lives in the module named like its
evaluator. The composite, whose members are themselves this union, is declared beside it so the
recursion needs no forward import.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

from evals_pipeline.models.assertions.base import AssertionBase
from evals_pipeline.models.assertions.code_grader import CodeGraderAssertion
from evals_pipeline.models.assertions.composite import Aggregator
from evals_pipeline.models.assertions.custom import CustomAssertion
from evals_pipeline.models.assertions.execution_metrics import ExecutionMetricsAssertion
from evals_pipeline.models.assertions.file_changes import FileChangesAssertion
from evals_pipeline.models.assertions.llm_grader import LlmGraderAssertion, RubricsAssertion
from evals_pipeline.models.assertions.metrics import (
    CostAssertion,
    LatencyAssertion,
    TokenUsageAssertion,
)
from evals_pipeline.models.assertions.skill_trigger import SkillTriggerAssertion
from evals_pipeline.models.assertions.structured import FieldAccuracyAssertion, IsJsonAssertion
from evals_pipeline.models.assertions.text import RegexAssertion, TextAssertion, TextSetAssertion
from evals_pipeline.models.assertions.trajectory import ToolTrajectoryAssertion


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
