"""What a codex rollout file records, and how its records become canonical events.

The rollout parser emits every record; the `exec --json` parser emits the ones stdout pairs
with its items, and the rollout's run facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from evals_pipeline.enrichers.builder import ParsedStream, SessionBuilder
from evals_pipeline.enrichers.codex.fields import Family
from evals_pipeline.models.messages import TokenUsage, ToolStatus


@dataclass
class Entry:
    """One thing the rollout records, in file order, with the model call it belongs to."""

    kind: Literal["user", "assistant", "call", "inject", "error", "retry"]
    turn: int
    ms: int | None
    text: str = ""
    source: str = ""
    label: str = ""
    message_id: str | None = None
    # tool calls
    call_id: str | None = None
    native: str = ""
    family: Family = "other"
    tool_input: Any = None
    output: str | None = None
    status: ToolStatus | None = None
    exit_code: int | None = None
    end_ms: int | None = None


@dataclass
class Rollout:
    entries: list[Entry] = field(default_factory=list)
    session_id: str | None = None
    model: str | None = None
    duration_ms: int | None = None
    usage: TokenUsage | None = None
    turn_usage: dict[int, TokenUsage] = field(default_factory=dict)
    llm_call_count: int = 0
    error: str | None = None
    last_agent_message: str | None = None
    times: list[int] = field(default_factory=list)


def emit_rollout(builder: SessionBuilder, rollout: Rollout) -> ParsedStream:
    for entry in rollout.entries:
        emit_entry(builder, entry)
    session = builder.session
    session.session_id = rollout.session_id
    session.error = rollout.error
    for ms in rollout.times:
        builder.seen(ms)
    answer = rollout.last_agent_message
    if answer is None:
        answer = next((e.text for e in reversed(rollout.entries) if e.kind == "assistant"), "")
    apply_rollout_facts(builder, rollout)
    return builder.finish(answer=answer)


def apply_rollout_facts(builder: SessionBuilder, rollout: Rollout) -> None:
    session = builder.session
    session.model = rollout.model
    session.duration_ms = rollout.duration_ms
    session.llm_call_count = rollout.llm_call_count
    session.token_usage = session.token_usage or rollout.usage
    for turn, usage in rollout.turn_usage.items():
        builder.turn_usage(turn, usage)


def emit_entry(builder: SessionBuilder, entry: Entry) -> None:
    if entry.kind == "call":
        emit_call(builder, entry, entry.call_id, entry.turn)
    elif entry.kind == "inject":
        builder.system_prompt(
            entry.source, entry.label, entry.text, turn_index=entry.turn, timestamp_ms=entry.ms
        )
    elif entry.kind == "error":
        builder.error(entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)
    elif entry.kind == "retry":
        builder.retry(entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)
    else:
        builder.message(entry.kind, entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)


def emit_call(builder: SessionBuilder, entry: Entry, call_id: str | None, turn: int) -> None:
    builder.tool_call(
        entry.native, entry.tool_input, call_id=call_id, turn_index=turn, timestamp_ms=entry.ms
    )
    _emit_result(builder, entry, call_id)


def _emit_result(builder: SessionBuilder, entry: Entry, call_id: str | None) -> None:
    duration = None
    if entry.ms is not None and entry.end_ms is not None:
        duration = entry.end_ms - entry.ms
    builder.tool_result(
        call_id,
        output=entry.output,
        status=entry.status,
        exit_code=entry.exit_code,
        end_ms=entry.end_ms,
        duration_ms=duration,
    )
