"""`code-grader`: a program speaking AgentV's grader contract, and its target-proxy budget.

Run by grading/code_grader/.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evals_pipeline.models.assertions.base import AssertionBase, extras_into_config
from evals_pipeline.models.assertions.preprocessing import PreprocessorSpec

DEFAULT_PROXY_MAX_CALLS = 50


class TargetProxyLimits(BaseModel):
    """`target: {max_calls: N}` on a code grader: the proxy, with its own call budget."""

    model_config = ConfigDict(extra="forbid")

    max_calls: int = Field(default=DEFAULT_PROXY_MAX_CALLS, ge=1)


class CodeGraderAssertion(AssertionBase):
    """A grader program speaking AgentV's stdin/stdout contract; unknown keys go into `config`."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    type: Literal["code-grader"]
    command: str | list[str]
    cwd: str | None = None
    timeout_seconds: float = Field(default=60.0, gt=0)
    messages_format: Literal["parquet", "json"] = "parquet"
    config: dict[str, Any] = Field(default_factory=dict)
    preprocessors: list[PreprocessorSpec] = Field(
        default_factory=list,
        description="Accepted as AgentV does; AgentV's code graders do not use them either.",
    )
    target: bool | TargetProxyLimits = Field(
        default=False,
        description="`true` or `{max_calls: N}`: the grader may ask the case's grader target "
        "(an LLM) questions through a loopback proxy (AGENTV_TARGET_PROXY_URL / _TOKEN); "
        "default budget 50 calls.",
    )

    @property
    def proxy_max_calls(self) -> int | None:
        """The proxy's call budget when the grader uses the target proxy, else None."""
        if isinstance(self.target, TargetProxyLimits):
            return self.target.max_calls
        return DEFAULT_PROXY_MAX_CALLS if self.target else None

    @model_validator(mode="before")
    @classmethod
    def _script_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "script" in data and "command" not in data:
            data = {**data, "command": data["script"]}
            del data["script"]
        return data

    @model_validator(mode="after")
    def _extras_into_config(self) -> CodeGraderAssertion:
        if self.messages_format != "parquet":
            # Ours alone: AgentV passes it on as an unknown key, and so do we (the same payload).
            self.config = {"messages_format": self.messages_format, **self.config}
        return extras_into_config(self)

    def display_name(self) -> str:
        return self.name or "code-grader"
