"""An enriched session: the canonical view of one agent run that graders and reports read."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from evals_pipeline.models.conversation import TurnRun
from evals_pipeline.models.errors import ErrorKind, ErrorStage, RecordError, upgraded
from evals_pipeline.models.events import Milestone, SystemPromptInjection
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.stored import StoredPath, StoredRecord

SessionStatus = Literal["ok", "agent_error", "timed_out", "setup_error"]
_SESSION_FAILURES: dict[str, tuple[ErrorStage, ErrorKind]] = {
    "setup_error": ("setup", "setup"),
    "timed_out": ("agent", "timeout"),
}

# AgentV's FILE_BACKED_OUTPUT_THRESHOLD: a final answer whose JSON encoding is longer goes to
# graders by path (`output_path`), not inline.
INLINE_OUTPUT_LIMIT = 50_000


def fits_inline(answer: str) -> bool:
    """Whether `answer` is small enough to travel inline in a grader payload."""
    return len(json.dumps(answer, ensure_ascii=False)) <= INLINE_OUTPUT_LIMIT


class TraceSummary(BaseModel):
    """Counts over a session's events, AgentV's `trace_summary`."""

    event_count: int = 0
    tool_calls: dict[str, int] = Field(default_factory=dict)
    error_count: int = 0
    tool_durations: dict[str, int] = Field(default_factory=dict)
    llm_call_count: int = 0


class Session(StoredRecord):
    """One agent run, enriched: messages stored once as Parquet, the rest small and inline."""

    UNREDACTED = (
        *StoredRecord.UNREDACTED,
        "messages_path",
        "output_path",
        "workspace_path",
        "events_path",
    )

    case_key: str
    agent: str
    trial: int = 0
    status: SessionStatus = "ok"
    error: RecordError | None = None
    stderr: str = ""
    messages_path: StoredPath = Field(description="Parquet file, one row per message.")
    message_count: int = 0
    output: str | None = Field(default=None, description="Final answer, when small enough.")
    output_path: StoredPath | None = Field(
        default=None, description="JSON file holding the final answer as a string literal."
    )
    output_chars: int = 0
    trace_summary: TraceSummary = Field(default_factory=TraceSummary)
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: int | None = Field(
        default=None,
        description="The agent's own figure of its time when its output gave one (claude's "
        "result `duration_ms`), else the runner's wall time; reports show `wall_ms`.",
    )
    start_ms: int | None = None
    end_ms: int | None = None
    workspace_path: StoredPath | None = None
    file_changes: str | None = None
    parse_warnings: list[str] = Field(default_factory=list)
    result_key: str | None = Field(default=None, description="Its run's result-cache key.")
    reused: Reuse | None = Field(
        default=None, description="Set when this session's run was reused from the result store."
    )
    agent_kind: str | None = Field(
        default=None, description="The agent CLI whose stream this is (claude-code, codex, ...)."
    )
    session_id: str | None = Field(default=None, description="The agent's own session id.")
    model: str | None = None
    agent_version: str | None = Field(
        default=None, description="The agent CLI's version, as its run recorded it."
    )
    events_path: StoredPath | None = Field(
        default=None, description="Parquet file of canonical events, for agent CLI streams."
    )
    milestones: list[Milestone] = Field(default_factory=list)
    system_prompt_injections: list[SystemPromptInjection] = Field(default_factory=list)
    retries: int = Field(default=0, description="Provider retries the agent reported.")
    turns: list[TurnRun] = Field(
        default_factory=list, description="A conversation's turns: each answer, or its error."
    )

    @property
    def wall_ms(self) -> int | None:
        """The wall time the runner measured around the agent process (its run's end - start):
        the duration every report, table and Dagster metadata shows."""
        if self.start_ms is None or self.end_ms is None:
            return None
        return self.end_ms - self.start_ms

    def milestone(self, name: str) -> Milestone | None:
        """The milestone called `name`, if the session reached it."""
        return next((m for m in self.milestones if m.name == name), None)

    @model_validator(mode="before")
    @classmethod
    def _typed_error(cls, data: Any) -> Any:
        """A plain-string error (a session from before RecordError) typed by its status."""
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            stage, kind = _SESSION_FAILURES.get(data.get("status", "ok"), ("agent", "failed"))
            error = upgraded(data["error"], stage=stage, kind=kind, stderr=data.get("stderr"))
            data = {**data, "error": error}
        return data
