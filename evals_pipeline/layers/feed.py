"""What a run's agents feed as each one ends, when this process runs the run's later steps too:
its session made for the sessions step (enrichers/ahead.py) and, once a case's sessions are all
made, the case graded for the grades step (grading/ahead.py), while the other agents run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals_pipeline.enrichers import ahead as sessions_made_ahead
from evals_pipeline.grading import ahead as grades_made_ahead
from evals_pipeline.layers.grades import grade_when_made, grades_ahead
from evals_pipeline.layers.sessions import sessions_ahead
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.results import ResultStore


def feed_later_steps(
    cases: list[ResolvedCase],
    folder_of: Callable[[str], Path],
    *,
    workers: int,
    store: ResultStore | None,
    grades: bool,
) -> Callable[[AgentRun], None]:
    """`run_agents`' `finished` for `cases`: the sessions step (and with `grades` the grades
    step) whose folder `folder_of(layer)` names takes what is made."""
    then = None
    if grades:
        made = grades_ahead(cases, workers=workers, store=store)
        then = grade_when_made(grades_made_ahead.start(folder_of("grades"), made))
    sessions = folder_of("sessions")
    return sessions_ahead(sessions_made_ahead.start(sessions, then), sessions)
