"""Whether a case can be graded again from its stored sessions alone, without the workspaces
its runs left: a changed grader then re-grades a stored run whose workspace was cleaned up,
instead of running its agent again."""

from __future__ import annotations

from evals_pipeline.models.assertions.code_grader import CodeGraderAssertion
from evals_pipeline.models.assertions.composite import CodeAggregator
from evals_pipeline.models.assertions.custom import CustomAssertion
from evals_pipeline.models.assertions.llm_grader import LlmGraderBase
from evals_pipeline.models.assertions.spec import CompositeAssertion, walk_assertions
from evals_pipeline.models.case import ResolvedCase


def reads_workspace(case: ResolvedCase) -> bool:
    """Whether a grader of `case` may read a run's workspace: a code or custom grader (handed
    its path), a composite's code aggregator, an LLM grader with preprocessors or a prompt
    command (scripts run with it), or one reading file blocks of an answer when the suite has a
    workspace (their paths resolve there); a conversation's turns are not looked into. The
    other graders read only the stored session: its answer, trace, metrics and diff."""
    if case.conversation is not None:
        return True
    for _, assertion in walk_assertions(case.assertions):
        if isinstance(assertion, CodeGraderAssertion | CustomAssertion):
            return True
        if isinstance(assertion, CompositeAssertion) and isinstance(
            assertion.aggregator, CodeAggregator
        ):
            return True
        if isinstance(assertion, LlmGraderBase) and (
            assertion.preprocessors
            or assertion.prompt_command is not None
            or case.workspace is not None
        ):
            return True
    return False
