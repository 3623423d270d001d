"""Assertion (grader) specs as written in a suite, one pydantic model per AgentV assertion type.

`AssertionSpec` (in `spec`) is a discriminated union on the kebab-case `type`; snake_case types
are accepted and normalised, as AgentV does. Each module holds the specs one evaluator judges and
is named like it (`text` here, grading/assertions/text.py there); grading/registry.py ties each
evaluator to its spec classes, so a type's name, model and evaluator cannot drift apart.
"""

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
from evals_pipeline.models.assertions.text import RegexAssertion, TextAssertion, TextSetAssertion
from evals_pipeline.models.assertions.trajectory import ExpectedToolCall, ToolTrajectoryAssertion

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
