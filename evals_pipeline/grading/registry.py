"""Which evaluator judges which assertion model, registered with `@evaluator` next to each one.

Each evaluator module decorates its function with the assertion model(s) it judges; the type
names come from the models' `type` literals (models/assertions/, one module per evaluator, named
like it), so a type, its model and its evaluator cannot drift apart: `check_registry` fails when a
model has no evaluator or two.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.models.assertions import ASSERTION_SPECS, AssertionBase, spec_types

SpecT = TypeVar("SpecT", bound=AssertionBase)
Evaluator = Callable[[Any, GradingContext], Evaluation]

EVALUATOR_MODULES: tuple[str, ...] = (
    "evals_pipeline.grading.assertions.text",
    "evals_pipeline.grading.assertions.structured",
    "evals_pipeline.grading.assertions.metrics",
    "evals_pipeline.grading.assertions.execution_metrics",
    "evals_pipeline.grading.assertions.trajectory",
    "evals_pipeline.grading.assertions.skill_trigger",
    "evals_pipeline.grading.assertions.file_changes",
    "evals_pipeline.grading.code_grader.run",
    "evals_pipeline.grading.assertions.custom",
    "evals_pipeline.grading.llm_grader",
    "evals_pipeline.grading.composite",
)
"""The modules holding `@evaluator` functions, imported on first use (they import this one)."""

_BY_SPEC: dict[type[AssertionBase], Evaluator] = {}
_EVALUATORS: dict[str, Evaluator] = {}


def evaluator(
    *specs: type[SpecT],
) -> Callable[
    [Callable[[SpecT, GradingContext], Evaluation]], Callable[[SpecT, GradingContext], Evaluation]
]:
    """Register the decorated function as the evaluator of these assertion models."""

    def register(
        function: Callable[[SpecT, GradingContext], Evaluation],
    ) -> Callable[[SpecT, GradingContext], Evaluation]:
        for spec in specs:
            if spec in _BY_SPEC and _BY_SPEC[spec] is not function:
                raise RuntimeError(f"{spec.__name__} has two evaluators")
            _BY_SPEC[spec] = function
        return function

    return register


def evaluators() -> dict[str, Evaluator]:
    """Evaluator by assertion type, for every model of the AssertionSpec union."""
    if not _EVALUATORS:
        for module in EVALUATOR_MODULES:
            importlib.import_module(module)
        check_registry()
        _EVALUATORS.update(
            {kind: _BY_SPEC[spec] for spec in ASSERTION_SPECS for kind in spec_types(spec)}
        )
    return dict(_EVALUATORS)


def check_registry() -> None:
    """Every assertion model has exactly one evaluator and every evaluator a model in the union."""
    missing = [spec.__name__ for spec in ASSERTION_SPECS if spec not in _BY_SPEC]
    stray = [spec.__name__ for spec in _BY_SPEC if spec not in ASSERTION_SPECS]
    if missing or stray:
        raise RuntimeError(
            f"assertion registry out of step: no evaluator for {missing}, "
            f"not in AssertionSpec: {stray}"
        )


def evaluate(spec: AssertionBase, ctx: GradingContext) -> Evaluation:
    """Judge one assertion with the evaluator registered for its model."""
    if not _EVALUATORS:
        evaluators()
    function = _BY_SPEC.get(type(spec))
    if function is None:
        return Evaluation.failed(f"no evaluator for assertion type {spec.kind!r}")
    return function(spec, ctx)
