"""Multi-turn conversations (AgentV's `mode: conversation`): each turn as resolved for a case,
and what each turn's call to the target gave."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.messages import Message, TokenUsage

Aggregation = Literal["mean", "min", "max"]
TurnFailure = Literal["continue", "stop"]


class ConversationTurn(BaseModel):
    """One turn: the user text sent, and how the target's answer to it is graded."""

    model_config = ConfigDict(frozen=True)

    input: str = Field(description="The user message (an object or list as compact JSON).")
    expected_output: list[Message] = Field(default_factory=list)
    assertions: list[AssertionSpec] = Field(
        default_factory=list,
        description="The turn's graders; its plain-string assertions are one llm-grader "
        "`turn-rubrics` with a criterion each.",
    )


class Conversation(BaseModel):
    """A live conversation: the turns in order and how their scores make the case's."""

    model_config = ConfigDict(frozen=True)

    turns: list[ConversationTurn] = Field(min_length=1)
    aggregation: Aggregation = "mean"
    on_turn_failure: TurnFailure = "continue"
    window_size: int | None = Field(
        default=None,
        ge=1,
        description="Turns of history sent (and graded) besides system messages; None: all.",
    )


class TurnRun(BaseModel):
    """What one turn's call to the target gave: the answer, or the provider error."""

    input: str
    answer: str = ""
    error: str | None = None
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    start_ms: int
    end_ms: int


History = list[tuple[str, str]]
"""(role, content) pairs: the conversation as AgentV keeps it between turns."""


def content_text(content: Any) -> str:
    """A message's content as AgentV puts it in a conversation: text, else compact JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def windowed(history: History, window_size: int | None) -> History:
    """System messages plus the last `window_size` exchanges (AgentV's buildWindowedHistory)."""
    if window_size is None:
        return list(history)
    system = [m for m in history if m[0] == "system"]
    rest = [m for m in history if m[0] != "system"]
    return system + rest[-window_size * 2 :]
