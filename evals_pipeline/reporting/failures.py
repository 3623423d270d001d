"""Failure attribution per agent (judging.md §9.2): trials from the grades, reasons from the judgments.

A trial passed when its grade's verdict is `pass`; every other trial (failed or errored) is a
failure, and the judgments' FailureClassification of the same (case, trial) says which of the nine
categories it was. Pass rates are given with and without the environmental (infrastructure)
failures, which are no evidence about the agent.
"""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.judging import failure_breakdown
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, FailureClassification
from evals_pipeline.models.report import AgentFailures


def agent_failures(
    grades: Sequence[CaseGrade], judgments: Sequence[CaseJudgment], agents: Sequence[str]
) -> list[AgentFailures]:
    """One breakdown per agent with grades, in `agents` order.

    A classification counts only for a trial the grades hold as failed: a judgment of a trial
    that has since passed (or is not graded) says nothing about this run's failures.
    """
    failures: dict[tuple[str, str, int], FailureClassification] = {
        (j.agent, j.case_key, t.trial): t.failure
        for j in judgments
        for t in j.trials
        if t.failure is not None
    }
    out = []
    for agent in agents:
        trials = [(g.case_key, t) for g in grades if g.agent == agent for t in g.trials]
        if not trials:
            continue
        passed = sum(t.verdict == "pass" for _, t in trials)
        classified = [
            c
            for case_key, t in trials
            if t.verdict != "pass" and (c := failures.get((agent, case_key, t.trial))) is not None
        ]
        out.append(
            AgentFailures(
                agent=agent,
                breakdown=failure_breakdown(len(trials), passed, classified),
                n_unclassified=len(trials) - passed - len(classified),
            )
        )
    return out
