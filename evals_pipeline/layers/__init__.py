"""What each layer does over many partitions at once, without Dagster: the asset bodies call
these, and so can tests and scripts. One module per layer."""

from evals_pipeline.layers.agent_runs import run_agents, run_folder
from evals_pipeline.layers.grades import grade_cases, grade_when_made, grades_ahead
from evals_pipeline.layers.judgments import collect_votes, judge_cases, panel_judges
from evals_pipeline.layers.pairwise import collect_readings, compare_cases
from evals_pipeline.layers.sessions import enrich_runs, sessions_ahead

__all__ = [
    "collect_readings",
    "collect_votes",
    "compare_cases",
    "enrich_runs",
    "grade_cases",
    "grade_when_made",
    "grades_ahead",
    "judge_cases",
    "panel_judges",
    "run_agents",
    "run_folder",
    "sessions_ahead",
]
