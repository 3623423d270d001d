"""What each layer does over many partitions at once, without Dagster: the asset bodies call
these, and so can tests and scripts. One module per layer."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.layers.agent_runs import run_agents, run_folder
    from evals_pipeline.layers.case_pipeline import CaseResults, run_case_pipeline
    from evals_pipeline.layers.grades import grade_cases
    from evals_pipeline.layers.judgments import collect_votes, judge_cases, panel_judges
    from evals_pipeline.layers.pairwise import collect_readings, compare_cases
    from evals_pipeline.layers.sessions import enrich_runs

# Each name loads its module when first used: the judging layers (and pyarrow) only when judged.
_MODULES = {
    "run_agents": "agent_runs",
    "run_folder": "agent_runs",
    "CaseResults": "case_pipeline",
    "run_case_pipeline": "case_pipeline",
    "grade_cases": "grades",
    "collect_votes": "judgments",
    "judge_cases": "judgments",
    "panel_judges": "judgments",
    "collect_readings": "pairwise",
    "compare_cases": "pairwise",
    "enrich_runs": "sessions",
}

__all__ = [
    "CaseResults",
    "collect_readings",
    "collect_votes",
    "compare_cases",
    "enrich_runs",
    "grade_cases",
    "judge_cases",
    "panel_judges",
    "run_agents",
    "run_case_pipeline",
    "run_folder",
]

__getattr__ = lazy_exports(__name__, _MODULES)
