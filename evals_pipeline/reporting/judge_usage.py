"""What judging cost (calls, tokens, dollars), kept apart from the agents' own cost.

Dimension panels report per (case, agent) in the judgments, pairwise panels per pair (calls and
cost; no tokens), and LLM graders per grader result when they record their usage. A cost of None
means no judge target had pricing; partial costs add up what is known.
"""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import JudgeUsage


def judge_usage(
    grades: Sequence[CaseGrade],
    judgments: Sequence[CaseJudgment],
    pairwise: Sequence[CasePairwise],
) -> JudgeUsage | None:
    """The run's judge usage; None when no panel judged and no grader called a model."""
    graders = sum((u for g in grades for t in g.trials if (u := _grader_usage(t))), LlmUsage())
    if not judgments and not pairwise and graders == LlmUsage():
        return None
    by_agent: dict[str, LlmUsage] = {}
    for j in judgments:
        usage = LlmUsage(
            calls=j.judge_calls,
            errors=j.judge_errors,
            input_tokens=j.judge_input_tokens,
            output_tokens=j.judge_output_tokens,
            cost_usd=j.judge_cost_usd,
        )
        by_agent[j.agent] = by_agent.get(j.agent, LlmUsage()) + usage
    panels = sum(by_agent.values(), LlmUsage())
    pairs = sum(
        (
            LlmUsage(
                calls=p.judge_calls,
                errors=len(p.errors),
                input_tokens=p.judge_input_tokens,
                output_tokens=p.judge_output_tokens,
                cost_usd=p.judge_cost_usd,
            )
            for case in pairwise
            for p in case.pairs
        ),
        LlmUsage(),
    )
    return JudgeUsage(
        judgments=panels,
        pairwise=pairs,
        graders=graders,
        total=panels + pairs + graders,
        by_agent=by_agent,
    )


def _grader_usage(trial: TrialGrade) -> LlmUsage | None:
    """The trial's summed grader usage, else the sum over its graders (older grades)."""
    if trial.judge_usage is not None:
        return trial.judge_usage
    usages = [g.judge_usage for g in trial.graders if g.judge_usage is not None]
    return sum(usages, LlmUsage()) if usages else None
