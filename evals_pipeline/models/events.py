"""The canonical event model: every agent's stream, whatever its dialect, as one sequence of events.

Enrichers parse a CLI's JSONL (claude stream-json, codex exec --json, pi --mode json, or their
session files) into an EnrichedSession. Tool names are canonical (see `CANONICAL_TOOLS`), so the
same script gives the same tool sequence for every agent; the native name is kept alongside.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from evals_pipeline.models.messages import Message, TokenUsage, ToolStatus

CANONICAL_TOOLS: tuple[str, ...] = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Search",
    "List",
    "Fetch",
    "WebSearch",
    "Task",
    "Todo",
    "Skill",
    "Other",
)
"""Canonical tool names; the mapping from each CLI's native tools is in docs/events.md."""

EventKind = Literal["message", "tool_call", "system_prompt", "retry", "error"]

MilestoneName = Literal[
    "first_file_read",
    "first_file_edit",
    "first_test_run",
    "first_test_pass",
    "last_edit",
    "final_answer",
]
MILESTONE_NAMES: tuple[MilestoneName, ...] = (
    "first_file_read",
    "first_file_edit",
    "first_test_run",
    "first_test_pass",
    "last_edit",
    "final_answer",
)


class EnrichedEvent(BaseModel):
    """One thing that happened in a session, in stream order.

    - `message`: a user or assistant message (`role`, `text`).
    - `tool_call`: a tool call paired with its result (`tool`, `native_tool`, `tool_input`,
      `tool_output`, `status`, `exit_code`).
    - `system_prompt`: text the CLI injected into the model's context (`source`, `label`, `text`).
    - `retry` / `error`: a provider retry or a model/API error (`text`, `detail`).
    """

    seq: int = Field(description="Position in the session, from 0.")
    kind: EventKind
    turn_index: int = Field(default=0, description="Model call the event belongs to, from 0.")
    timestamp_ms: int | None = None
    role: Literal["user", "assistant", "system", "tool"] | None = None
    text: str | None = None
    tool: str | None = Field(default=None, description="Canonical tool name.")
    native_tool: str | None = None
    tool_call_id: str | None = None
    tool_input: Any = None
    tool_output: str | None = None
    status: ToolStatus | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    source: str | None = Field(default=None, description="Where a system prompt came from.")
    label: str | None = None
    token_usage: TokenUsage | None = None
    model: str | None = None
    detail: dict[str, Any] | None = None


class Milestone(BaseModel):
    """When a session first (or last) reached a point that matters for time-to-X metrics."""

    name: MilestoneName
    seq: int
    turn_index: int
    timestamp_ms: int | None = None
    elapsed_ms: int | None = Field(default=None, description="Since the session started.")


class SystemPromptInjection(BaseModel):
    """Context a CLI added on its own: developer instructions, environment, reminders, skills."""

    source: str
    label: str
    content: str
    turn_index: int = 0


class EnrichedSession(BaseModel):
    """What an enricher makes of one agent stream: canonical events, messages and run facts."""

    agent_kind: str = Field(description="The stream's dialect: claude-code, codex, pi-agent.")
    session_id: str | None = None
    model: str | None = None
    events: list[EnrichedEvent] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    final_answer: str = ""
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    llm_call_count: int = 0
    system_prompt_injections: list[SystemPromptInjection] = Field(default_factory=list)
    milestones: list[Milestone] = Field(default_factory=list)
    error: str | None = Field(
        default=None, description="A model or API error the stream reports (even on exit 0)."
    )
    retries: int = 0
    parse_warnings: list[str] = Field(default_factory=list)

    def tool_sequence(self) -> list[str]:
        """Canonical tool names in call order."""
        return [e.tool for e in self.events if e.kind == "tool_call" and e.tool]
