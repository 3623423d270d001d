"""What each layer does over many partitions at once, without Dagster: the asset bodies call
these, and so can tests and scripts. One module per layer."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.layers.agent_runs import run_agents, run_folder
    from evals_pipeline.layers.grades import grade_cases, grade_when_made, grades_ahead
    from evals_pipeline.layers.judgments import collect_votes, judge_cases, panel_judges
    from evals_pipeline.layers.pairwise import collect_readings, compare_cases
    from evals_pipeline.layers.sessions import enrich_runs, sessions_ahead

# Each name loads its module when first used: `evals-pipeline run` starts its agents with the
# agents layer alone, before the judging layers (and pyarrow) are loaded.
_MODULES = {
    "run_agents": "agent_runs",
    "run_folder": "agent_runs",
    "grade_cases": "grades",
    "grade_when_made": "grades",
    "grades_ahead": "grades",
    "collect_votes": "judgments",
    "judge_cases": "judgments",
    "panel_judges": "judgments",
    "collect_readings": "pairwise",
    "compare_cases": "pairwise",
    "enrich_runs": "sessions",
    "sessions_ahead": "sessions",
}

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

__getattr__ = lazy_exports(__name__, _MODULES)
