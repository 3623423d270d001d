"""AgentV grading: turns an enriched session into grades, without Dagster.

Each assertion type of a suite (models/assertions/) has one evaluator, registered with
`@evaluator` against its spec class (`registry`): the deterministic types in `assertions/`, code
graders and their target proxy in `code_grader/`, `llm-grader` and `composite` beside them. Each
becomes a GraderResult, and the results add up to a TrialGrade per trial and a CaseGrade per
(case, agent), as AgentV 4.42.4 scores them.
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.grading.assertions import changed_files
    from evals_pipeline.grading.code_grader import build_grader_payload, run_code_grader
    from evals_pipeline.grading.context import GradingContext, LlmClientSource
    from evals_pipeline.grading.evaluation import Evaluation
    from evals_pipeline.grading.registry import check_registry, evaluate, evaluator, evaluators
    from evals_pipeline.grading.trial import aggregate_trials, grade_trial

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "Evaluation": "evaluation",
    "GradingContext": "context",
    "LlmClientSource": "context",
    "aggregate_trials": "trial",
    "build_grader_payload": "code_grader",
    "changed_files": "assertions",
    "check_registry": "registry",
    "evaluate": "registry",
    "evaluator": "registry",
    "evaluators": "registry",
    "grade_trial": "trial",
    "run_code_grader": "code_grader",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "Evaluation",
    "GradingContext",
    "LlmClientSource",
    "aggregate_trials",
    "build_grader_payload",
    "changed_files",
    "check_registry",
    "evaluate",
    "evaluator",
    "evaluators",
    "grade_trial",
    "run_code_grader",
]
