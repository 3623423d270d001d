"""AgentV's scoring rules (reference §4.1), with one difference: a grader that fails is an error.

AgentV scores a crashed code grader as an ordinary fail (score 0); here it has no score at all, so
a broken grader can never pass or sink an agent silently. `run --agentv-scoring` scores it as
AgentV does (agentv_scored), still flagged, for numbers comparable with AgentV's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.models.assertions import AssertionBase
from evals_pipeline.models.errors import RecordError, stderr_tail
from evals_pipeline.models.grade import NO_SCORE, AssertionOutcome, GraderResult, Verdict
from evals_pipeline.process import now_ms

GRADER_PASS_SCORE = 0.8
# Weighted means such as (1 + 1 + 0.4) / 3 land a hair below 0.8 in floating point.
SCORE_EPSILON = 1e-9


def clamp(score: float) -> float:
    """A score in [0, 1]; NaN and infinities count as 0."""
    if math.isnan(score) or math.isinf(score):
        return 0.0
    return min(1.0, max(0.0, score))


def clamp_warning(raw: float, clamped: float) -> str:
    """What clamping did to a score outside [0, 1] (AgentV's clampScore), for the grade."""
    if math.isnan(raw):
        return "the score is NaN, not a number: counted as 0"
    return f"the score {raw:g} is outside [0, 1]: clamped to {clamped:g}"


def meets(score: float, threshold: float) -> bool:
    """Whether a score reaches a threshold, tolerant of floating-point rounding."""
    return score >= threshold - SCORE_EPSILON


def grade(
    spec: AssertionBase, evaluate: Callable[[], Evaluation], *, threshold: float
) -> GraderResult:
    """Run one evaluator, timed; an exception in it is a grader error, not a crash of the trial."""
    start = now_ms()
    try:
        evaluation = evaluate()
    except Exception as exc:  # a broken evaluator is recorded as data, the suite goes on
        evaluation = Evaluation.failed(f"{type(exc).__name__}: {exc}")
    return finalize(spec, evaluation, threshold=threshold, start_ms=start)


def finalize(
    spec: AssertionBase, evaluation: Evaluation, *, threshold: float, start_ms: int
) -> GraderResult:
    """Apply clamp, verdict and negation to an evaluator's outcome."""
    verdict: Verdict
    score: float | None = None
    assertions = evaluation.assertions
    warnings = list(evaluation.warnings)
    if evaluation.error is not None or evaluation.score is None:
        verdict = "error"
    else:
        score = clamp(evaluation.score)
        if score != evaluation.score:
            warnings.append(clamp_warning(evaluation.score, score))
        passed = meets(score, GRADER_PASS_SCORE) if evaluation.passed is None else evaluation.passed
        if spec.negate:
            score, passed = 1.0 - score, not passed
            assertions = [_negated(a) for a in assertions]
        verdict = "pass" if passed else "fail"
    return GraderResult(
        name=spec.display_name(),
        type=spec.kind,
        score=score,
        verdict=verdict,
        weight=spec.weight,
        gate=spec.gate(threshold),
        assertions=assertions,
        details=evaluation.details,
        error=grader_error(evaluation) if verdict == "error" else None,
        stderr=evaluation.stderr,
        scores=evaluation.children,
        warnings=warnings,
        start_ms=start_ms,
        duration_ms=now_ms() - start_ms,
    )


def agentv_scored(result: GraderResult, *, negate: bool) -> GraderResult:
    """A grader that could not judge, scored as AgentV scores one (its orchestrator's and its
    code grader's `catch`): 0 with the verdict `fail` and one failed statement, then negated like
    any score (`negate: true` makes it 1, `pass`). The error and stderr stay on the grade and a
    warning names them, so the crash is still seen. Any other result is returned as it is."""
    if result.verdict != "error":
        return result
    failed = AssertionOutcome(text=f"Grader '{result.name}' failed: {result.error}", passed=False)
    score, verdict = (1.0, "pass") if negate else (0.0, "fail")
    return result.model_copy(
        update={
            "score": score,
            "verdict": verdict,
            "assertions": [_negated(failed) if negate else failed],
            "warnings": [
                *result.warnings,
                f"could not grade ({result.error}): scored {score:g} as AgentV scores a failed "
                "grader (run --agentv-scoring); without it the case is an error",
            ],
        }
    )


def _negated(outcome: AssertionOutcome) -> AssertionOutcome:
    evidence = f"[Negated] {outcome.evidence}" if outcome.evidence else None
    return AssertionOutcome(text=outcome.text, passed=not outcome.passed, evidence=evidence)


def trial_score(graders: list[GraderResult]) -> float:
    """Weighted mean of the scored graders; 0 when a required grader is below its gate."""
    scored = [(g.score, g) for g in graders if g.score is not None]
    if any(g.gate is not None and not meets(score, g.gate) for score, g in scored):
        return 0.0
    total_weight = sum(g.weight for _, g in scored)
    if total_weight <= 0:
        return 0.0
    return sum(score * g.weight for score, g in scored) / total_weight


def grader_error(evaluation: Evaluation) -> RecordError:
    """Why a grader gave no score: its own reason with its stderr's tail, or that it gave none."""
    if evaluation.error is None:
        return RecordError(stage="grade", kind="no_score", message=NO_SCORE)
    tail = stderr_tail(evaluation.stderr)
    return RecordError(
        stage="grade", kind=evaluation.error_kind, message=evaluation.error, stderr_tail=tail
    )
