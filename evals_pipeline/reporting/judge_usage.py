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
    graders = LlmUsage.total(u for g in grades for t in g.trials if (u := _grader_usage(t)))
    if not judgments and not pairwise and graders == LlmUsage():
        return None
    # Summed as plain numbers: a model per judgment and per addition cost ~0.1 s at 10,000.
    rows: dict[str, list[tuple[int, int, int, int, float | None]]] = {}
    for j in judgments:
        rows.setdefault(j.agent, []).append(
            (
                j.judge_calls,
                j.judge_errors,
                j.judge_input_tokens,
                j.judge_output_tokens,
                j.judge_cost_usd,
            )
        )
    by_agent = {agent: LlmUsage.summed(agent_rows) for agent, agent_rows in rows.items()}
    panels = LlmUsage.total(by_agent.values())
    pairs = LlmUsage.summed(
        (
            p.judge_calls,
            len(p.errors),
            p.judge_input_tokens,
            p.judge_output_tokens,
            p.judge_cost_usd,
        )
        for case in pairwise
        for p in case.pairs
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
