"""The report's line for each case that did not pass, or passed with warnings. Apart from the
summary, so the grades (their per-case check and metadata) can say why a case failed without
loading the report's judging and statistics."""

from __future__ import annotations

from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.report import CaseFailure, CaseWarning


def failure_reason(grade: CaseGrade) -> str:
    """An error's stage and first line, or a failure's score and the graders that did not pass."""
    if grade.verdict == "error":
        first_line = (message_of(grade.error) or "").strip().splitlines()[:1]
        return f"error in {grade.failure_stage}: {first_line[0] if first_line else 'unknown'}"[:300]
    failing = [r.name for t in grade.trials for r in t.graders if r.verdict != "pass"]
    graders = ", ".join(dict.fromkeys(failing)) or "no grader failed; the weighted score is too low"
    return f"score {grade.score:.2f} < {grade.threshold:g}: {graders}"[:300]


def case_failures(grades: list[CaseGrade]) -> list[CaseFailure]:
    """Every (case, agent) that did not pass, ordered by agent and test id."""
    return [
        CaseFailure(agent=g.agent, test_id=g.test_id, verdict=g.verdict, reason=failure_reason(g))
        for g in sorted(grades, key=lambda g: (g.agent, g.test_id))
        if g.verdict != "pass"
    ]


def case_warnings(grades: list[CaseGrade]) -> list[CaseWarning]:
    """Every (case, agent) graded with warnings, ordered by agent and test id."""
    return [
        CaseWarning(agent=g.agent, test_id=g.test_id, verdict=g.verdict, warnings=g.warnings)
        for g in sorted(grades, key=lambda g: (g.agent, g.test_id))
        if g.warnings
    ]
