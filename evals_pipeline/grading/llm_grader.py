"""LLM graders: `llm-grader`, `rubrics` and the implicit grader of a test without assertions.

AgentV's scoring (reference §4, §4.1; the prompts are in llm_prompt.py): the model answers strict
JSON, freeform `{score, assertions, details}` or, in rubric mode,
`{checks: [{id, satisfied, reasoning}]}`; a rubric score is the weighted share of satisfied
criteria and an unsatisfied required criterion fails the grader. When any criterion has
`score_ranges` the rubric is analytic (AgentV's score-range mode):
`{checks: [{id, score: 0..10, reasoning}]}`, the weighted mean of score/10. Where AgentV turns an
unusable reply into a `skip`, here it is an `error` verdict carrying the reason and the start of
what the model said, so the trial is an error and never a silent 0 or 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.llm_prompt import (
    Mode,
    build_request,
)
from evals_pipeline.grading.prompt_template import PromptTemplateError
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.grading.scoring import grade
from evals_pipeline.llm import LlmConfigError, LlmUsage, complete_structured
from evals_pipeline.llm.client import LlmClient
from evals_pipeline.models.assertions import (
    SCORE_MAX,
    SCORE_MIN,
    AssertionBase,
    LlmGraderAssertion,
    LlmGraderBase,
    RubricItem,
    RubricsAssertion,
)
from evals_pipeline.models.grade import AssertionOutcome, GraderResult

RAW_EXCERPT_CHARS = 300


SCORE_RANGE_PASS = 7
"""A score-range criterion passes at 7/10 or more (and at or above its gate)."""

NO_TARGET = (
    "no grader target: add grader_target: <llm target> to the agent target, or target: "
    "<llm target> to the assertion"
)


# --- the replies asked for ---------------------------------------------------------------------


class GraderStatement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str
    passed: bool
    evidence: str | None = None

    @field_validator("evidence", mode="before")
    @classmethod
    def _evidence_text(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)


class FreeformReply(BaseModel):
    """`{score, assertions, details}`: the freeform grader's verdict."""

    model_config = ConfigDict(extra="ignore")

    score: float
    assertions: list[GraderStatement] = Field(default_factory=list)
    details: dict[str, Any] | None = None


class RubricCheck(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    satisfied: bool
    reasoning: str = ""


class RubricReply(BaseModel):
    """`{checks: [{id, satisfied, reasoning}], overall_reasoning}`: one check per criterion."""

    model_config = ConfigDict(extra="ignore")

    checks: list[RubricCheck]
    overall_reasoning: str = ""


class ScoreRangeCheck(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    score: int = Field(ge=SCORE_MIN, le=SCORE_MAX)
    reasoning: str | None = None

    @field_validator("score", mode="before")
    @classmethod
    def _integer(cls, value: Any) -> Any:
        # AgentV's zod schema: a JSON number that is an integer (7.0 is 7); no strings or booleans.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("score must be an integer from 0 to 10")
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"score must be an integer from 0 to 10, not {value}")
        return int(value)


class ScoreRangeReply(BaseModel):
    """`{checks: [{id, score, reasoning}], overall_reasoning}`: a 0..10 score per criterion."""

    model_config = ConfigDict(extra="ignore")

    checks: list[ScoreRangeCheck]
    overall_reasoning: str | None = None


REPLY_TYPES: dict[Mode, type[FreeformReply | RubricReply | ScoreRangeReply]] = {
    "freeform": FreeformReply,
    "rubric": RubricReply,
    "score_range": ScoreRangeReply,
}


# --- an evaluation that also carries the judge's usage ----------------------------------------


@dataclass(frozen=True)
class JudgedEvaluation(Evaluation):
    """An evaluation made with LLM calls: their usage, and a verdict forced to fail."""

    judge_usage: LlmUsage | None = None
    required_failed: bool = False
    """A required rubric criterion is unsatisfied: the grader fails whatever its score."""


def grade_assertion(
    spec: AssertionBase, evaluate: Callable[[], Evaluation], *, threshold: float
) -> GraderResult:
    """`scoring.grade`, plus what a JudgedEvaluation adds: judge usage and the required rule."""
    seen: list[Evaluation] = []

    def run() -> Evaluation:
        evaluation = evaluate()
        seen.append(evaluation)
        return evaluation

    result = grade(spec, run, threshold=threshold)
    judged = seen[0] if seen and isinstance(seen[0], JudgedEvaluation) else None
    if judged is None:
        return result
    update: dict[str, Any] = {"judge_usage": judged.judge_usage}
    if judged.required_failed and result.score is not None:
        # AgentV: a failed required criterion fails the grader; negation flips that verdict.
        update["verdict"] = "pass" if spec.negate else "fail"
    return result.model_copy(update=update)


# --- evaluation -------------------------------------------------------------------------------


@evaluator(LlmGraderAssertion, RubricsAssertion)
def evaluate_llm_grader(spec: LlmGraderBase, ctx: GradingContext) -> Evaluation:
    """Ask the grader target to judge the session; score it by AgentV's rules."""
    key = spec.client_key(ctx.case.grader_target)
    if spec.target is not None and key not in ctx.case.llm_targets:
        # AgentV builds this grader at run time and fails it, scoring 0 (builtin-graders.ts).
        name = spec.display_name()
        return Evaluation.check(
            False,
            f"Grader '{name}' failed: llm-grader evaluator '{name}': target '{spec.target}' "
            "not found in targets",
        )
    client = llm_client(key, ctx)
    if isinstance(client, Evaluation):
        return client
    assert key is not None
    try:
        request, mode = build_request(spec, ctx)
    except OSError as exc:
        return Evaluation.failed(f"cannot read the grader prompt: {exc}")
    except PromptTemplateError as exc:
        return Evaluation.failed(str(exc), exc.stderr or None)
    reply = complete_structured(client, request, REPLY_TYPES[mode], repairs=1)
    details: dict[str, Any] = {
        "grader_target": key,
        "model": client.model,
        "mode": mode,
        "repaired": reply.repaired,
    }
    if reply.value is None:
        error = f"llm-grader on {key!r}: {reply.error or 'no usable reply'}"
        if reply.texts:
            error += f"; the model's last reply: {excerpt(reply.texts[-1])}"
        return JudgedEvaluation(score=None, error=error, details=details, judge_usage=reply.usage)
    if isinstance(reply.value, RubricReply):
        return _rubric_evaluation(reply.value, spec.rubric_items, details, reply.usage)
    if isinstance(reply.value, ScoreRangeReply):
        return _score_range_evaluation(reply.value, spec.rubric_items, details, reply.usage)
    value = reply.value
    assert isinstance(value, FreeformReply)
    if value.details:
        details["grader_details"] = value.details
    return JudgedEvaluation(
        score=value.score,
        assertions=[
            AssertionOutcome(text=s.text, passed=s.passed, evidence=s.evidence)
            for s in value.assertions
        ],
        details=details,
        judge_usage=reply.usage,
    )


def llm_client(key: str | None, ctx: GradingContext) -> LlmClient | Evaluation:
    """The client a grader asks by key (`target` or `target@model`), or why there is none."""
    if key is None:
        return Evaluation.failed(NO_TARGET)
    if ctx.llm is None:
        return Evaluation.failed(
            f"no LLM client for target {key!r}: grade the case through evals_pipeline.layers."
            "grade_cases, or pass llm= to grade_trial"
        )
    try:
        return ctx.llm.get(key)
    except KeyError:
        return Evaluation.failed(
            f"LLM target {key!r} is not among the case's llm_targets "
            f"({', '.join(ctx.case.llm_targets) or 'none'}); resolve the case again"
        )
    except LlmConfigError as exc:
        return Evaluation.failed(f"LLM target {key!r} cannot be called: {exc}")


def _rubric_evaluation(
    value: RubricReply, items: list[RubricItem], details: dict[str, Any], usage: LlmUsage
) -> JudgedEvaluation:
    """AgentV's calculateRubricScore: the weighted share of satisfied criteria among the checks
    the model returned (a criterion it left out, or an id that is no criterion, counts for
    nothing there, so here too: they are listed in details as `unreported`)."""
    by_id = {item.id: item for item in items}
    total = earned = 0.0
    outcomes: list[AssertionOutcome] = []
    failed_required: list[str] = []
    for check in value.checks:
        item = by_id.get(check.id)
        if item is None:
            continue
        total += item.weight
        earned += item.weight if check.satisfied else 0.0
        outcomes.append(
            AssertionOutcome(
                text=f"[{item.id}] {item.outcome}",
                passed=check.satisfied,
                evidence=check.reasoning or None,
            )
        )
        if not check.satisfied and item.must_pass:
            failed_required.append(item.id)
    details = {**details, "overall_reasoning": value.overall_reasoning}
    reported = {check.id for check in value.checks}
    unreported = [item.id for item in items if item.id not in reported]
    if unreported:
        details["unreported"] = unreported
    if failed_required:
        details["failed_required"] = failed_required
    return JudgedEvaluation(
        score=min(1.0, max(0.0, earned / total)) if total > 0 else 0.0,
        assertions=outcomes,
        details=details,
        judge_usage=usage,
        required_failed=bool(failed_required),
    )


def _score_range_evaluation(
    value: ScoreRangeReply, items: list[RubricItem], details: dict[str, Any], usage: LlmUsage
) -> JudgedEvaluation:
    """AgentV's calculateScoreRangeResult: the weighted mean of score/10 over the checks the
    model returned (unknown ids ignored, as there); a check below its gate fails the grader."""
    by_id = {item.id: item for item in items}
    total = earned = 0.0
    outcomes: list[AssertionOutcome] = []
    raw_scores: dict[str, int] = {}
    failed_required: list[str] = []
    for check in value.checks:
        item = by_id.get(check.id)
        if item is None:
            continue
        normalized = check.score / SCORE_MAX
        raw_scores[item.id] = check.score
        total += item.weight
        earned += normalized * item.weight
        gate = item.score_gate
        below_gate = gate is not None and normalized < gate
        if below_gate:
            failed_required.append(item.id)
        band = next(
            (
                r.outcome
                for r in item.score_ranges or []
                if r.score_range[0] <= check.score <= r.score_range[1]
            ),
            "",
        )
        outcomes.append(
            AssertionOutcome(
                text=f"[{item.id}] {item.outcome or item.id} - Score: {check.score}/10 ({band})",
                passed=not below_gate and check.score >= SCORE_RANGE_PASS,
                evidence=check.reasoning or None,
            )
        )
    details = {
        **details,
        "raw_scores": raw_scores,
        "normalization": "score / 10",
        "aggregation": "weighted_average",
    }
    if value.overall_reasoning:
        details["overall_reasoning"] = value.overall_reasoning
    if failed_required:
        details["failed_required"] = failed_required
    return JudgedEvaluation(
        score=min(1.0, max(0.0, earned / total)) if total > 0 else 0.0,
        assertions=outcomes,
        details=details,
        judge_usage=usage,
        required_failed=bool(failed_required),
    )


def excerpt(text: str, limit: int = RAW_EXCERPT_CHARS) -> str:
    """The start of a reply, quoted, whitespace collapsed: enough to see what went wrong."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[:limit] + "…"
    return json.dumps(flat, ensure_ascii=False)
