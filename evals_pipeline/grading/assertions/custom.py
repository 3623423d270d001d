"""Custom assertion types: a grader file found by the type's name, run as a code grader.

The suite loader finds `.agentv/assertions/<type>.*` (or `.agentv/graders/`, legacy
`.agentv/judges/`) and writes how to run it into the spec; here it speaks the code-grader
contract (stdin payload, stdout score) like any `code-grader`.
"""

from __future__ import annotations

from evals_pipeline.grading.code_grader.run import evaluate_code_grader
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import CodeGraderAssertion, CustomAssertion


@evaluator(CustomAssertion)
def evaluate_custom_assertion(spec: CustomAssertion, ctx: GradingContext) -> Evaluation:
    """Run the type's grader file with the code-grader payload and read its score."""
    grader = CodeGraderAssertion(
        type="code-grader",
        name=spec.display_name(),
        command=spec.command,
        cwd=spec.cwd,
        config=spec.config,
        timeout_seconds=spec.timeout_seconds,
    )
    return evaluate_code_grader(grader, ctx)
