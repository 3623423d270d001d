"""Repeated trials per agent: suite pass@k and pass^k for k = 1..n (judging.md §10).

A case contributes n (its trials) and c (trials whose verdict is `pass`); errored trials count as
failures, since a crash is a run that did not succeed. The estimators average over cases, so
every case of the agent needs the same n: with uneven trial counts the agent gets no values.
"""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.report import AgentRepeatedTrials
from evals_pipeline.statistics import repeated_trials


def agent_repeated_trials(
    grades: Sequence[CaseGrade], agents: Sequence[str]
) -> list[AgentRepeatedTrials]:
    """One entry per agent with grades, in `agents` order."""
    out = []
    for agent in agents:
        cases = [
            (len(g.trials), sum(t.verdict == "pass" for t in g.trials))
            for g in grades
            if g.agent == agent
        ]
        if not cases:
            continue
        counts = {n for n, _ in cases}
        if len(counts) > 1 or 0 in counts:
            out.append(
                AgentRepeatedTrials(
                    agent=agent,
                    n_cases=len(cases),
                    trials_per_case=None,
                    reason=f"uneven trials per case ({', '.join(map(str, sorted(counts)))})",
                )
            )
            continue
        out.append(
            AgentRepeatedTrials(
                agent=agent,
                n_cases=len(cases),
                trials_per_case=counts.pop(),
                values=repeated_trials(cases),
            )
        )
    return out
