"""An eval suite as authored: AgentV's v4 eval YAML (tests, execution, targets, workspace)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.targets import TargetSpec


class ContentBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["text", "file", "image"]
    value: str


class MessageSpec(BaseModel):
    """One authored message; content is text, an object, or a list of blocks."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | dict[str, Any] | list[ContentBlock | str] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


InputSpec = str | list[MessageSpec | str] | dict[str, Any]


class TargetRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    use_target: str | None = None


class TrialsSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = Field(default=1, ge=1, le=100)
    strategy: Literal["pass_at_k", "mean"] = "pass_at_k"


class ExecutionSpec(BaseModel):
    """Run settings of a suite (or of one test, where only some apply)."""

    model_config = ConfigDict(extra="forbid")

    target: str | None = None
    targets: list[str | TargetRef] | None = None
    workers: int = Field(default=3, ge=1, le=50)
    timeout_seconds: float | None = Field(
        default=None, gt=0, description="Agent timeout; a target's own timeout wins."
    )
    threshold: float = Field(default=0.8, ge=0, le=1)
    skip_defaults: bool = False
    trials: TrialsSpec = Field(default_factory=TrialsSpec)

    def target_names(self) -> list[str]:
        names = [t if isinstance(t, str) else t.name for t in self.targets or []]
        if self.target and self.target not in names:
            names.insert(0, self.target)
        return names


class TestExecutionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str | None = None
    threshold: float | None = Field(default=None, ge=0, le=1)
    skip_defaults: bool = False


class WorkspaceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    template: str | None = Field(
        default=None, description="A folder copied into each run's fresh workspace."
    )


class TestSpec(BaseModel):
    """One test: what the agent is asked and how its answer is graded."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    criteria: str = ""
    input: InputSpec = ""
    input_files: list[str] = Field(default_factory=list)
    expected_output: InputSpec | None = None
    assertions: list[AssertionSpec] = Field(default_factory=list)
    execution: TestExecutionSpec | None = None
    workspace: WorkspaceSpec | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _rename_alias(data, "evaluators", "assertions")


class EvalSuite(BaseModel):
    """A whole eval file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str | None = Field(default=None, alias="$schema")
    name: str | None = Field(default=None, pattern=r"^[a-z0-9-]+$")
    description: str = ""
    category: str | None = None
    version: str | None = None
    author: str | None = None
    tags: list[str] = Field(default_factory=list)
    license: str | None = None
    tests: list[TestSpec] = Field(min_length=1)
    execution: ExecutionSpec = Field(default_factory=ExecutionSpec)
    assertions: list[AssertionSpec] = Field(default_factory=list)
    input: InputSpec | None = None
    input_files: list[str] = Field(default_factory=list)
    workspace: WorkspaceSpec | None = None
    targets: list[TargetSpec] = Field(
        default_factory=list,
        description="Inline targets; otherwise the nearest .agentv/targets.yaml is used.",
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        data = _rename_alias(data, "eval_cases", "tests")
        if isinstance(data, dict) and "target" in data and "execution" not in data:
            data = {**data, "execution": {"target": data["target"]}}
            del data["target"]
        return data


def _rename_alias(data: Any, old: str, new: str) -> Any:
    if isinstance(data, dict) and old in data and new not in data:
        data = dict(data)
        data[new] = data.pop(old)
    return data
