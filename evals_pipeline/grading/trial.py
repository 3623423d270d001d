"""Grading one trial (every assertion of a case on one session) and aggregating a case's trials."""

from __future__ import annotations

import math
from functools import partial

from evals_pipeline.enrichers.cli_output import answer_warnings
from evals_pipeline.grading.context import GradingContext, LlmClientSource
from evals_pipeline.grading.conversation import grade_conversation
from evals_pipeline.grading.llm_grader import grade_assertion
from evals_pipeline.grading.registry import evaluate
from evals_pipeline.grading.scoring import agentv_scored, meets, trial_score
from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import RecordError
from evals_pipeline.models.grade import (
    NO_SCORE,
    CaseGrade,
    ExecutionStatus,
    FailureStage,
    GraderResult,
    TrialGrade,
    Verdict,
)
from evals_pipeline.models.session import Session
from evals_pipeline.secrets import run_redactor

NO_GRADERS = (
    "no graders: add assertions to the test, or give its agent target a grader_target (an LLM "
    "target) so an llm-grader judges the test's criteria"
)


def grade_trial(
    case: ResolvedCase,
    session: Session,
    trial: int = 0,
    llm: LlmClientSource | None = None,
    ctx: GradingContext | None = None,
) -> TrialGrade:
    """Run every assertion of `case` on `session` and score the trial by AgentV's rules.

    A failed agent run is not graded; a grader that fails makes the trial an error rather than a
    quality verdict, so infrastructure problems never masquerade as agent failures. `llm` gives
    llm-graders and the target proxy their clients (evals_pipeline.llm.LlmClients); `ctx`, the
    session's context when it was prepared ahead (prefetch.py).
    """
    if session.status != "ok":
        stage: FailureStage = "setup" if session.status == "setup_error" else "agent"
        error = session.error or RecordError(
            stage="setup" if stage == "setup" else "agent", kind="failed", message=session.status
        )
        return _trial_grade(session, trial, *_ERROR, stage=stage, error=error)
    if case.conversation is not None:
        # AgentV classifies a conversation by its aggregated score alone.
        score, turns = grade_conversation(case, session, llm)
        return _trial_grade(
            session, trial, *_quality(score, case.threshold), score=score, graders=turns
        )
    if not case.assertions:
        no_graders = RecordError(stage="grade", kind="setup", message=NO_GRADERS)
        return _trial_grade(session, trial, *_ERROR, stage="grader", error=no_graders)
    ctx = ctx or GradingContext(case, session, llm)
    graders = [
        grade_assertion(spec, partial(evaluate, spec, ctx), threshold=case.threshold)
        for spec in case.assertions
    ]
    if case.agentv_scoring:
        graders = [
            agentv_scored(g, negate=spec.negate)
            for g, spec in zip(graders, case.assertions, strict=True)
        ]
    failed = [g for g in graders if g.verdict == "error"]
    if failed:
        first = failed[0].error or RecordError(stage="grade", kind="no_score", message=NO_SCORE)
        error = first.with_message(
            "; ".join(f"grader {g.name!r} failed: {g.error}" for g in failed)
        )
        return _trial_grade(session, trial, *_ERROR, stage="grader", error=error, graders=graders)
    score = trial_score(graders)
    return _trial_grade(
        session, trial, *_quality(score, case.threshold), score=score, graders=graders
    )


TRIAL_PASS_SCORE = 0.8
"""A trial "passes" (pass_at_k stops there) at this score, whatever the threshold: AgentV's
scoreToVerdict default."""

# Two-sided 95% t critical values for 1..29 degrees of freedom (AgentV's trials.ts table).
_T_95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086,
    2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045,
)  # fmt: skip


def counted_trials(case: ResolvedCase, trials: list[TrialGrade]) -> list[TrialGrade]:
    """The trials AgentV would have run, in order: it stops after the first passing trial
    (pass_at_k) and once the trials' summed cost reaches `cost_limit_usd`. Here every trial
    runs (concurrently); the ones after the stop are left out of the case's grade."""
    counted: list[TrialGrade] = []
    spent = 0.0
    limit = case.trials.cost_limit_usd
    for trial in sorted(trials, key=lambda t: t.trial):
        counted.append(trial)
        spent += trial.cost_usd or 0.0
        if limit and spent >= limit:
            break
        if case.trials.strategy == "pass_at_k" and trial.score >= TRIAL_PASS_SCORE:
            break
    return counted


def trials_score(strategy: str, scores: list[float]) -> float:
    """One score from the trials' scores: best (pass_at_k), mean, or the lower bound of the
    mean's 95% t-interval clamped to [0, 1] (confidence_interval)."""
    if strategy == "pass_at_k":
        return max(scores)
    mean = sum(scores) / len(scores)
    if strategy == "mean" or len(scores) < 2:
        return mean
    n = len(scores)
    stddev = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1))
    t = _T_95[n - 2] if n - 1 < 30 else 1.96
    return max(0.0, min(1.0, mean - t * stddev / math.sqrt(n)))


def aggregate_trials(case: ResolvedCase, trials: list[TrialGrade]) -> CaseGrade:
    """The case's grade over its trials, by AgentV's rules (trials.ts, runEvalCaseWithTrials).

    An errored trial counts with score 0. The case is `ok` when any counted trial is, an error
    only when every one errored, else a quality failure; its verdict is its score against the
    threshold.
    """
    if not trials:
        raise ValueError(f"case {case.case_key!r}: no trials to aggregate")
    counted = counted_trials(case, trials)
    if all(t.verdict == "error" for t in counted):
        first = counted[0]
        return _case_grade(case, counted, *_ERROR, stage=first.failure_stage, error=first.error)
    score = trials_score(case.trials.strategy, [t.score for t in counted])
    verdict, _ = _quality(score, case.threshold)
    status: ExecutionStatus = (
        "ok" if any(t.execution_status == "ok" for t in counted) else "quality_failure"
    )
    return _case_grade(case, counted, verdict, status, score=score)


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


def grader_warnings(graders: list[GraderResult]) -> list[str]:
    """Every grader's warnings, composite members included, each named by its grader."""
    out: list[str] = []
    for g in graders:
        out += [f"grader {g.name!r}: {w}" for w in g.warnings]
        out += grader_warnings(g.scores)
    return out


def _trial_grade(
    session: Session,
    trial: int,
    verdict: Verdict,
    status: ExecutionStatus,
    *,
    score: float = 0.0,
    stage: FailureStage | None = None,
    error: RecordError | None = None,
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
        wall_ms=session.wall_ms,
        tool_calls=session.trace_summary.tool_calls,
        llm_calls=session.trace_summary.llm_call_count,
        milestones=session.milestones,
        agent_version=session.agent_version,
        judge_usage=judge_usage(graders or []),
        warnings=[*answer_warnings(session.parse_warnings), *grader_warnings(graders or [])],
    )


def _case_grade(
    case: ResolvedCase,
    trials: list[TrialGrade],
    verdict: Verdict,
    status: ExecutionStatus,
    *,
    score: float = 0.0,
    stage: FailureStage | None = None,
    error: RecordError | None = None,
) -> CaseGrade:
    # Graders see the case's secrets and the workspace; what they said is stored and logged.
    return run_redactor().model(
        CaseGrade(
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
            warnings=list(
                dict.fromkeys(
                    f"trial {t.trial}: {w}" if len(trials) > 1 else w
                    for t in trials
                    for w in t.warnings
                )
            ),
        )
    )
