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


def case_judge_costs(
    grades: Sequence[CaseGrade],
    judgments: Sequence[CaseJudgment] = (),
    pairwise: Sequence[CasePairwise] = (),
) -> dict[tuple[str, str], float | None]:
    """What grading and judging cost per (case_key, agent), over every trial: its LLM graders,
    its dimension panel, and half of each pairwise panel it sat in (a pair is judged for both
    agents). None where nothing was priced: the estimate of the next run reads these."""
    costs: dict[tuple[str, str], list[float | None]] = {}
    for g in grades:
        costs[(g.case_key, g.agent)] = [
            u.cost_usd for t in g.trials if (u := _grader_usage(t)) is not None
        ]
    for j in judgments:
        costs.setdefault((j.case_key, j.agent), []).append(j.judge_cost_usd)
    for case in pairwise:
        for p in case.pairs:
            half = None if p.judge_cost_usd is None else p.judge_cost_usd / 2
            for agent in (p.agent_a, p.agent_b):
                costs.setdefault((case.case_key, agent), []).append(half)
    return {
        key: (sum(known) if (known := [c for c in found if c is not None]) else None)
        for key, found in costs.items()
    }


def _grader_usage(trial: TrialGrade) -> LlmUsage | None:
    """The trial's summed grader usage, else the sum over its graders (older grades)."""
    if trial.judge_usage is not None:
        return trial.judge_usage
    usages = [g.judge_usage for g in trial.graders if g.judge_usage is not None]
    return sum(usages, LlmUsage()) if usages else None
