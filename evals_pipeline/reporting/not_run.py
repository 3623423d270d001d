"""The cases a run chose not to launch (its budget was spent), as the report lists them."""

from __future__ import annotations

from collections.abc import Iterable

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.report import NotRunCase
from evals_pipeline.models.run import AgentRun

LAUNCHED = ('"not_run":null', '"not_run": null')
"""What the stored JSON of a run that was launched holds (compact, as records are written, or
spaced, as a record scrubbed of a secret is written again): the report reads only the others."""


def not_run_cases(
    runs: Iterable[AgentRun], cases: Iterable[ResolvedCase], grades: Iterable[CaseGrade]
) -> list[NotRunCase]:
    """Each (case, agent) whose latest runs were not launched and that has no grade, ordered by
    agent and test id; a partition graded by an earlier run keeps that grade instead."""
    graded = {(g.case_key, g.agent) for g in grades}
    test_ids = {(c.case_key, c.agent): c.test_id for c in cases}
    found: dict[tuple[str, str], str] = {}
    for run in runs:
        key = (run.case_key, run.agent)
        if run.not_run and key not in graded:
            found.setdefault(key, run.not_run)
    listed = [
        NotRunCase(agent=agent, test_id=test_ids.get((case_key, agent), case_key), reason=reason)
        for (case_key, agent), reason in found.items()
    ]
    return sorted(listed, key=lambda c: (c.agent, c.test_id))
