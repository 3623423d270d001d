"""Which evaluator judges which assertion type; a new assertion type is one entry here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evals_pipeline.judges.code_grader import evaluate_code_grader
from evals_pipeline.judges.context import GradingContext
from evals_pipeline.judges.evaluation import Evaluation
from evals_pipeline.judges.file_changes import evaluate_file_changes
from evals_pipeline.judges.llm_grader import evaluate_llm_grader
from evals_pipeline.judges.metrics import evaluate_cost, evaluate_latency, evaluate_token_usage
from evals_pipeline.judges.structured import evaluate_field_accuracy, evaluate_is_json
from evals_pipeline.judges.text import evaluate_regex, evaluate_text, evaluate_text_set
from evals_pipeline.judges.trajectory import evaluate_tool_trajectory
from evals_pipeline.models.assertions import AssertionBase

Evaluator = Callable[[Any, GradingContext], Evaluation]

EVALUATORS: dict[str, Evaluator] = {
    "contains": evaluate_text,
    "icontains": evaluate_text,
    "equals": evaluate_text,
    "starts-with": evaluate_text,
    "ends-with": evaluate_text,
    "contains-any": evaluate_text_set,
    "contains-all": evaluate_text_set,
    "icontains-any": evaluate_text_set,
    "icontains-all": evaluate_text_set,
    "regex": evaluate_regex,
    "is-json": evaluate_is_json,
    "field-accuracy": evaluate_field_accuracy,
    "tool-trajectory": evaluate_tool_trajectory,
    "latency": evaluate_latency,
    "cost": evaluate_cost,
    "token-usage": evaluate_token_usage,
    "file-changes": evaluate_file_changes,
    "code-grader": evaluate_code_grader,
    "llm-grader": evaluate_llm_grader,
    "rubrics": evaluate_llm_grader,
}


def evaluate(spec: AssertionBase, ctx: GradingContext) -> Evaluation:
    """Judge one assertion with the evaluator registered for its type."""
    kind = getattr(spec, "type", None)
    evaluator = EVALUATORS.get(kind) if isinstance(kind, str) else None
    if evaluator is None:
        return Evaluation.failed(f"no evaluator for assertion type {kind!r}")
    return evaluator(spec, ctx)
