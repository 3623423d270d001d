"""Assertion (grader) specs as written in a suite, one pydantic model per AgentV assertion type.

`AssertionSpec` (in `spec`) is a discriminated union on the kebab-case `type`; snake_case types
are accepted and normalised, as AgentV does. Each module holds the specs one evaluator judges and
is named like it (`text` here, grading/assertions/text.py there); grading/registry.py ties each
evaluator to its spec classes, so a type's name, model and evaluator cannot drift apart.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals_pipeline.models.assertions.base import AssertionBase
    from evals_pipeline.models.assertions.code_grader import (
        DEFAULT_PROXY_MAX_CALLS,
        CodeGraderAssertion,
        TargetProxyLimits,
    )
    from evals_pipeline.models.assertions.composite import (
        Aggregator,
        CodeAggregator,
        LlmAggregator,
        ThresholdAggregator,
        WeightedAverageAggregator,
    )
    from evals_pipeline.models.assertions.custom import CustomAssertion
    from evals_pipeline.models.assertions.execution_metrics import ExecutionMetricsAssertion
    from evals_pipeline.models.assertions.file_changes import FileChangesAssertion
    from evals_pipeline.models.assertions.llm_grader import (
        LLM_GRADER_TYPES,
        PROMPT_FILE_PREFIX,
        SCORE_MAX,
        SCORE_MIN,
        LlmGraderAssertion,
        LlmGraderBase,
        PromptCommand,
        RubricItem,
        RubricOperator,
        RubricsAssertion,
        ScoreRange,
    )
    from evals_pipeline.models.assertions.metrics import (
        CostAssertion,
        LatencyAssertion,
        TokenUsageAssertion,
    )
    from evals_pipeline.models.assertions.preprocessing import (
        MIME_TYPE_ALIASES,
        PreprocessorSpec,
        merge_preprocessors,
        normalize_media_type,
    )
    from evals_pipeline.models.assertions.skill_trigger import SkillTriggerAssertion
    from evals_pipeline.models.assertions.spec import (
        ASSERTION_SPECS,
        ASSERTION_TYPES,
        AssertionSpec,
        CompositeAssertion,
        normalize_assertion_type,
        spec_types,
        walk_assertions,
    )
    from evals_pipeline.models.assertions.structured import (
        FieldAccuracyAssertion,
        FieldSpec,
        IsJsonAssertion,
    )
    from evals_pipeline.models.assertions.text import (
        RegexAssertion,
        TextAssertion,
        TextSetAssertion,
    )
    from evals_pipeline.models.assertions.trajectory import (
        ExpectedToolCall,
        ToolTrajectoryAssertion,
    )

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "ASSERTION_SPECS": "spec",
    "ASSERTION_TYPES": "spec",
    "Aggregator": "composite",
    "AssertionBase": "base",
    "AssertionSpec": "spec",
    "CodeAggregator": "composite",
    "CodeGraderAssertion": "code_grader",
    "CompositeAssertion": "spec",
    "CostAssertion": "metrics",
    "CustomAssertion": "custom",
    "DEFAULT_PROXY_MAX_CALLS": "code_grader",
    "ExecutionMetricsAssertion": "execution_metrics",
    "ExpectedToolCall": "trajectory",
    "FieldAccuracyAssertion": "structured",
    "FieldSpec": "structured",
    "FileChangesAssertion": "file_changes",
    "IsJsonAssertion": "structured",
    "LLM_GRADER_TYPES": "llm_grader",
    "LatencyAssertion": "metrics",
    "LlmAggregator": "composite",
    "LlmGraderAssertion": "llm_grader",
    "LlmGraderBase": "llm_grader",
    "MIME_TYPE_ALIASES": "preprocessing",
    "PROMPT_FILE_PREFIX": "llm_grader",
    "PreprocessorSpec": "preprocessing",
    "PromptCommand": "llm_grader",
    "RegexAssertion": "text",
    "RubricItem": "llm_grader",
    "RubricOperator": "llm_grader",
    "RubricsAssertion": "llm_grader",
    "SCORE_MAX": "llm_grader",
    "SCORE_MIN": "llm_grader",
    "ScoreRange": "llm_grader",
    "SkillTriggerAssertion": "skill_trigger",
    "TargetProxyLimits": "code_grader",
    "TextAssertion": "text",
    "TextSetAssertion": "text",
    "ThresholdAggregator": "composite",
    "TokenUsageAssertion": "metrics",
    "ToolTrajectoryAssertion": "trajectory",
    "WeightedAverageAggregator": "composite",
    "merge_preprocessors": "preprocessing",
    "normalize_assertion_type": "spec",
    "normalize_media_type": "preprocessing",
    "spec_types": "spec",
    "walk_assertions": "spec",
}


def __getattr__(name: str) -> Any:
    # evals_pipeline.lazy_exports inlined: models/ imports only models/.
    if name in _MODULES:
        return getattr(import_module(f"{__name__}.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ASSERTION_SPECS",
    "ASSERTION_TYPES",
    "DEFAULT_PROXY_MAX_CALLS",
    "LLM_GRADER_TYPES",
    "MIME_TYPE_ALIASES",
    "PROMPT_FILE_PREFIX",
    "SCORE_MAX",
    "SCORE_MIN",
    "Aggregator",
    "AssertionBase",
    "AssertionSpec",
    "CodeAggregator",
    "CodeGraderAssertion",
    "CompositeAssertion",
    "CostAssertion",
    "CustomAssertion",
    "ExecutionMetricsAssertion",
    "ExpectedToolCall",
    "FieldAccuracyAssertion",
    "FieldSpec",
    "FileChangesAssertion",
    "IsJsonAssertion",
    "LatencyAssertion",
    "LlmAggregator",
    "LlmGraderAssertion",
    "LlmGraderBase",
    "PreprocessorSpec",
    "PromptCommand",
    "RegexAssertion",
    "RubricItem",
    "RubricOperator",
    "RubricsAssertion",
    "ScoreRange",
    "SkillTriggerAssertion",
    "TargetProxyLimits",
    "TextAssertion",
    "TextSetAssertion",
    "ThresholdAggregator",
    "TokenUsageAssertion",
    "ToolTrajectoryAssertion",
    "WeightedAverageAggregator",
    "merge_preprocessors",
    "normalize_assertion_type",
    "normalize_media_type",
    "spec_types",
    "walk_assertions",
]
