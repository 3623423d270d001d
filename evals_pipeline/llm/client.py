"""The one call every judge makes: a system prompt and messages in, text and usage out.

Providers differ only in how they send it (anthropic Messages, OpenAI Chat Completions or
Responses); judges, the llm-grader and the target proxy see this interface alone.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.errors import EvalsPipelineError


class LlmMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["user", "assistant"]
    content: str


class LlmRequest(BaseModel):
    """One completion request; temperature and max tokens default to the target's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = ""
    messages: tuple[LlmMessage, ...] = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_output_tokens: int | None = Field(default=None, ge=1)

    @classmethod
    def ask(cls, question: str, system: str = "") -> LlmRequest:
        """A single-question request."""
        return cls(system=system, messages=(LlmMessage(role="user", content=question),))

    def followed_by(self, answer: str, question: str) -> LlmRequest:
        """This conversation plus the model's `answer` and a new user `question` (a re-ask)."""
        extra = (
            LlmMessage(role="assistant", content=answer),
            LlmMessage(role="user", content=question),
        )
        return self.model_copy(update={"messages": (*self.messages, *extra)})


class LlmReply(BaseModel):
    """What one successful call returned, with its cost when the target has pricing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    model: str = Field(description="The model id the API reported (or the one requested).")
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    duration_ms: int = Field(default=0, ge=0)


class LlmCallError(EvalsPipelineError):
    """A call that failed after the SDK's retries: HTTP status (if any) and the API's message."""

    def __init__(self, target: str, message: str, status: int | None = None) -> None:
        self.target = target
        self.status = status
        self.message = message
        where = f"HTTP {status}: " if status else ""
        super().__init__(f"LLM target {target!r}: {where}{message}")


class LlmConfigError(ValueError, EvalsPipelineError):
    """A target that cannot be called as configured (no API key): fix the target or the env."""


class LlmClient(Protocol):
    """A configured model: `name` is the target's name, `model` the model id it asks for."""

    @property
    def name(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def complete(self, request: LlmRequest) -> LlmReply:
        """Send one request; raises LlmCallError once retries are exhausted."""
        ...
