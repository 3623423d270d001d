"""Grading one trial (every assertion of a case on one session) and aggregating a case's trials."""

from __future__ import annotations

from functools import partial

from evals_pipeline.judges.context import GradingContext, LlmClientSource
from evals_pipeline.judges.conversation import grade_conversation
from evals_pipeline.judges.llm_grader import grade_assertion
from evals_pipeline.judges.registry import evaluate
from evals_pipeline.judges.scoring import meets, trial_score
from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import (
    CaseGrade,
    ExecutionStatus,
    FailureStage,
    GraderResult,
    TrialGrade,
    Verdict,
)
from evals_pipeline.models.session import Session

NO_GRADERS = (
    "no graders: add assertions to the test, or give its agent target a grader_target (an LLM "
    "target) so an llm-grader judges the test's criteria"
)


def grade_trial(
    case: ResolvedCase, session: Session, trial: int = 0, llm: LlmClientSource | None = None
) -> TrialGrade:
    """Run every assertion of `case` on `session` and score the trial by AgentV's rules.

    A failed agent run is not graded; a grader that fails makes the trial an error rather than a
    quality verdict, so infrastructure problems never masquerade as agent failures. `llm` gives
    llm-graders and the target proxy their clients (evals_pipeline.llm.LlmClients).
    """
    if session.status != "ok":
        stage: FailureStage = "setup" if session.status == "setup_error" else "agent"
        return _trial_grade(
            session, trial, *_ERROR, stage=stage, error=session.error or session.status
        )
    if case.conversation is not None:
        # AgentV classifies a conversation by its aggregated score alone.
        score, turns = grade_conversation(case, session, llm)
        return _trial_grade(
            session, trial, *_quality(score, case.threshold), score=score, graders=turns
        )
    if not case.assertions:
        return _trial_grade(session, trial, *_ERROR, stage="grader", error=NO_GRADERS)
    ctx = GradingContext(case, session, llm)
    graders = [
        grade_assertion(spec, partial(evaluate, spec, ctx), threshold=case.threshold)
        for spec in case.assertions
    ]
    failed = [g for g in graders if g.verdict == "error"]
    if failed:
        error = "; ".join(f"grader {g.name!r} failed: {g.error}" for g in failed)
        return _trial_grade(session, trial, *_ERROR, stage="grader", error=error, graders=graders)
    score = trial_score(graders)
    return _trial_grade(
        session, trial, *_quality(score, case.threshold), score=score, graders=graders
    )


def aggregate_trials(case: ResolvedCase, trials: list[TrialGrade]) -> CaseGrade:
    """The case verdict over its trials: the best one (pass_at_k) or the mean score (mean).

    Errored trials are left out; only when every trial errored is the case an error.
    """
    if not trials:
        raise ValueError(f"case {case.case_key!r}: no trials to aggregate")
    graded = [t for t in trials if t.verdict != "error"]
    if not graded:
        first = trials[0]
        return _case_grade(case, trials, *_ERROR, stage=first.failure_stage, error=first.error)
    if case.trials.strategy == "pass_at_k":
        best = max(graded, key=lambda t: t.score)
        return _case_grade(case, trials, best.verdict, best.execution_status, score=best.score)
    score = sum(t.score for t in graded) / len(graded)
    return _case_grade(case, trials, *_quality(score, case.threshold), score=score)


_ERROR: tuple[Verdict, ExecutionStatus] = ("error", "execution_error")


def _quality(score: float, threshold: float) -> tuple[Verdict, ExecutionStatus]:
    return ("pass", "ok") if meets(score, threshold) else ("fail", "quality_failure")


def judge_usage(graders: list[GraderResult]) -> LlmUsage | None:
    """The graders' LLM usage summed; None when no grader called a model."""
    usages = [g.judge_usage for g in graders if g.judge_usage is not None]
    if not usages:
        return None
    total = usages[0]
    for usage in usages[1:]:
        total = total + usage
    return total


def _trial_grade(
    session: Session,
    trial: int,
    verdict: Verdict,
    status: ExecutionStatus,
    *,
    score: float = 0.0,
    stage: FailureStage | None = None,
    error: str | None = None,
    graders: list[GraderResult] | None = None,
) -> TrialGrade:
    return TrialGrade(
        trial=trial,
        score=score,
        verdict=verdict,
        execution_status=status,
        failure_stage=stage,
        error=error,
        graders=graders or [],
        token_usage=session.token_usage,
        cost_usd=session.cost_usd,
        duration_ms=session.duration_ms,
        tool_calls=session.trace_summary.tool_calls,
        llm_calls=session.trace_summary.llm_call_count,
        milestones=session.milestones,
        judge_usage=judge_usage(graders or []),
    )


def _case_grade(
    case: ResolvedCase,
    trials: list[TrialGrade],
    verdict: Verdict,
    status: ExecutionStatus,
    *,
    score: float = 0.0,
    stage: FailureStage | None = None,
    error: str | None = None,
) -> CaseGrade:
    return CaseGrade(
        case_key=case.case_key,
        test_id=case.test_id,
        agent=case.agent,
        threshold=case.threshold,
        score=score,
        verdict=verdict,
        execution_status=status,
        failure_stage=stage,
        error=error,
        trials=trials,
    )
