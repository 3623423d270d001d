"""Builders of the records the judged report reads, shared by its test modules: judgments (`judged`,
`dimension`, `vote`), grades (`graded`), human labels (`label`), pairwise verdicts (`pair`,
`reading`, `consistent`) and the failure classifications `ENVIRONMENTAL` and `CAPABILITY`."""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.grade import CaseGrade, TrialGrade, Verdict
from evals_pipeline.models.judging import (
    CaseJudgment,
    CasePairwise,
    Dimension,
    DimensionJudgment,
    FailureClassification,
    JudgeVerdict,
    PairwiseDimension,
    PairwiseReading,
    PairwiseVerdict,
    TrialJudgment,
)
from evals_pipeline.reporting import HumanLabel
from evals_pipeline.statistics import pairwise_judge

ENVIRONMENTAL = FailureClassification(
    primary="llm_provider_error", tier="environmental", rule_id="E2.status"
)
CAPABILITY = FailureClassification(
    primary="incorrect_implementation", tier="capability", rule_id="C3.graders"
)


def dimension(
    name: Dimension, passed: bool | None, votes: Sequence[JudgeVerdict] = ()
) -> DimensionJudgment:
    score = None if passed is None else float(passed)
    return DimensionJudgment(
        dimension=name,
        votes=tuple(votes),
        n_valid=sum(v.valid is True for v in votes),
        heuristic_score=score,
        weight_heuristic=0.7,
        blended_score=score,
        passed=passed,
    )


def judged(
    agent: str,
    test_id: str,
    passed: Sequence[bool | None],
    *,
    name: Dimension = "correctness",
    failure: FailureClassification | None = None,
    votes: Sequence[JudgeVerdict] = (),
    calls: int = 0,
    cost: float | None = None,
) -> CaseJudgment:
    """A case judgment whose trial i has one dimension with decision passed[i]."""
    return CaseJudgment(
        case_key=test_id,
        test_id=test_id,
        agent=agent,
        trials=tuple(
            TrialJudgment(trial=i, dimensions=(dimension(name, p, votes),), failure=failure)
            for i, p in enumerate(passed)
        ),
        judge_calls=calls,
        judge_input_tokens=10 * calls,
        judge_output_tokens=calls,
        judge_cost_usd=cost,
    )


def graded(agent: str, test_id: str, verdicts: Sequence[Verdict]) -> CaseGrade:
    trials = [
        TrialGrade(
            trial=i,
            score=float(v == "pass"),
            verdict=v,
            execution_status={"pass": "ok", "fail": "quality_failure"}.get(v, "execution_error"),
            failure_stage="agent" if v == "error" else None,
        )
        for i, v in enumerate(verdicts)
    ]
    best = "pass" if "pass" in verdicts else "fail" if "fail" in verdicts else "error"
    return CaseGrade(
        case_key=test_id,
        test_id=test_id,
        agent=agent,
        threshold=0.5,
        score=float(best == "pass"),
        verdict=best,
        execution_status="ok" if best == "pass" else "quality_failure",
        trials=trials,
    )


def label(
    test_id: str, human: str, split: str | None = "test", agent: str = "claude-code"
) -> HumanLabel:
    return HumanLabel.model_validate(
        {
            "test_id": test_id,
            "agent": agent,
            "dimension": "correctness",
            "human_verdict": human,
            "split": split,
        }
    )


def reading(judge: str, r1: str, r2: str) -> PairwiseReading:
    result = pairwise_judge(r1, r2, judge_model=f"{judge}-2025")
    return PairwiseReading(judge=judge, **result.model_dump())


def pair(
    case: str,
    first: str,
    second: str,
    verdict: str,
    readings: Sequence[PairwiseReading],
    *,
    per_dimension: str | None = None,
) -> CasePairwise:
    bias = any(r.position_following for r in readings)
    overall = PairwiseDimension(
        dimension="overall", readings=tuple(readings), verdict=verdict, bias_detected=bias
    )
    dims = ()
    if per_dimension is not None:
        dims = (
            PairwiseDimension(
                dimension="correctness", readings=(), verdict=per_dimension, bias_detected=False
            ),
        )
    winner = {"A": first, "B": second}.get(verdict)
    return CasePairwise(
        case_key=case,
        pairs=(
            PairwiseVerdict(
                case_key=case, test_id=case, agent_a=first, agent_b=second, seed=7,
                winner=winner, overall=overall, per_dimension=dims, bias_detected=bias,
                judge_calls=2 * len(readings), judge_cost_usd=0.01,
            ),
        ),
    )  # fmt: skip


def consistent(judge: str = "j2") -> list[PairwiseReading]:
    return [reading(judge, "FIRST", "SECOND")]


def vote(
    model: str,
    verdict: str,
    valid: bool | None,
    *,
    partial: bool = False,
    judge: str | None = None,
) -> JudgeVerdict:
    return JudgeVerdict(
        judge=judge,
        judge_model=model,
        dimension="correctness",
        verdict=verdict,
        confidence=0.9,
        valid=valid,
        partially_grounded=partial,
    )
