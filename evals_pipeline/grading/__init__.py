"""The judge layer: turns an enriched session into grades, without Dagster.

Deterministic assertions and code graders run here; each becomes a GraderResult, and the results
add up to a TrialGrade per trial and a CaseGrade per (case, agent).
"""

from evals_pipeline.grading.code_grader.payload import build_grader_payload
from evals_pipeline.grading.code_grader.run import run_code_grader
from evals_pipeline.grading.trial import aggregate_trials, grade_trial

__all__ = ["aggregate_trials", "build_grader_payload", "grade_trial", "run_code_grader"]
