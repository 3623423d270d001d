"""The part every stream parser shares: events in order, tool results paired, messages derived.

A parser reads its dialect and calls `SessionBuilder` methods in stream order (events are
numbered as they are added); `finish()` derives the AgentV-shaped messages and the session's
time span from the events. Events and messages stay plain Python values (no model each): the
stored session is made from them as Arrow columns (stream_tables.py), and the canonical models
only when a caller asks for them (`ParsedStream.enriched`). Tool calls carry their canonical
name in the messages too, so trajectory graders compare the same names for every agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from evals_pipeline.enrichers.milestones import compute_milestones
from evals_pipeline.enrichers.tool_names import ToolNames, canonical_tool
from evals_pipeline.models.events import EnrichedEvent, EnrichedSession, SystemPromptInjection
from evals_pipeline.models.messages import MESSAGE_LIST, TokenUsage, ToolStatus, content_text


def as_text(content: Any) -> str:
    """Message or tool-result content as text, whatever shape the stream gave it."""
    if isinstance(content, str | list | dict):
        return content_text(content)
    return "" if content is None else str(content)


EVENT_FIELDS: tuple[str, ...] = tuple(EnrichedEvent.model_fields)


class StreamEvent:
    """One event as the parser made it: `EnrichedEvent`'s fields, without a model's cost (a 10 MB
    stream has ~10,000); parsers fill a tool call's result in later, as they read it."""

    __slots__ = EVENT_FIELDS

    seq: int
    kind: str
    turn_index: int
    timestamp_ms: int | None
    role: str | None
    text: str | None
    tool: str | None
    native_tool: str | None
    tool_call_id: str | None
    tool_input: Any
    tool_output: str | None
    status: ToolStatus | None
    exit_code: int | None
    duration_ms: int | None
    source: str | None
    label: str | None
    token_usage: TokenUsage | None
    model: str | None
    detail: dict[str, Any] | None

    def __init__(
        self,
        seq: int,
        kind: str,
        turn_index: int = 0,
        timestamp_ms: int | None = None,
        role: str | None = None,
        text: str | None = None,
        tool: str | None = None,
        native_tool: str | None = None,
        tool_call_id: str | None = None,
        tool_input: Any = None,
        source: str | None = None,
        label: str | None = None,
        model: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        # Each field by name (not a loop of setattr): a long stream makes ~10,000 events.
        self.seq, self.kind, self.turn_index, self.timestamp_ms = (
            seq,
            kind,
            turn_index,
            timestamp_ms,
        )
        self.role, self.text, self.tool, self.native_tool = role, text, tool, native_tool
        self.tool_call_id, self.tool_input, self.source, self.label = (
            tool_call_id,
            tool_input,
            source,
            label,
        )
        self.model, self.detail = model, detail
        # Filled in later: a tool call's result, a turn's usage.
        self.tool_output = self.status = self.exit_code = self.duration_ms = None
        self.token_usage = None

    def as_model(self) -> EnrichedEvent:
        """The event as the canonical model."""
        return EnrichedEvent.model_validate({name: getattr(self, name) for name in EVENT_FIELDS})


@dataclass
class ParsedStream:
    """A parsed stream: the session's facts (`session`, its events and messages left empty), its
    events in order, and its messages as AgentV-shaped dicts (a tool call's dict also holds its
    event's `seq`)."""

    session: EnrichedSession
    events: list[StreamEvent]
    messages: list[dict[str, Any]]

    def enriched(self) -> EnrichedSession:
        """The session in the canonical models, events, messages and milestones filled in."""
        session = self.session
        session.events = [event.as_model() for event in self.events]
        session.messages = MESSAGE_LIST.validate_python(self.messages)
        session.milestones = compute_milestones(session.events, session.start_ms)
        return session


@contextmanager
def tolerate(number: int, warnings: list[str]) -> Iterator[None]:
    """Skip a line whose fields have shapes the parser does not expect, with a warning: one odd
    line (a newer CLI version, a hand-edited file) must not lose the rest of the session."""
    try:
        yield
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        warnings.append(f"line {number}: skipped, unexpected shape ({type(exc).__name__}: {exc})")


class SessionBuilder:
    """Collects one stream's events and facts; parsers set run-level fields on `.session`."""

    def __init__(self, agent_kind: str, tools: ToolNames) -> None:
        self.session = EnrichedSession(agent_kind=agent_kind)
        self.events: list[StreamEvent] = []
        self.tools = tools
        self.warnings = self.session.parse_warnings
        self._calls: dict[str, StreamEvent] = {}
        self._call_end_ms: dict[int, int] = {}
        self._turn_usage: dict[int, TokenUsage] = {}
        self._first_ms: int | None = None
        self._last_ms: int | None = None

    # --- facts ---------------------------------------------------------------------------

    def seen(self, timestamp_ms: int | None) -> None:
        """Record a timestamp the stream really gave, for the session's start and end."""
        if timestamp_ms is None:
            return
        if self._first_ms is None or timestamp_ms < self._first_ms:
            self._first_ms = timestamp_ms
        if self._last_ms is None or timestamp_ms > self._last_ms:
            self._last_ms = timestamp_ms

    def turn_usage(self, turn_index: int, usage: TokenUsage) -> None:
        """Token usage of one model call, shown on that call's assistant message."""
        self._turn_usage[turn_index] = usage

    # --- events --------------------------------------------------------------------------

    def add(self, kind: str, **fields: Any) -> StreamEvent:
        """Append an event; its `seq` is its position in the session."""
        event = StreamEvent(len(self.events), kind, **fields)
        self.events.append(event)
        return event

    def message(
        self,
        role: str,
        text: str,
        *,
        turn_index: int,
        timestamp_ms: int | None = None,
        model: str | None = None,
    ) -> StreamEvent | None:
        """A user or assistant text; empty texts are not events."""
        if not text:
            return None
        return self.add(
            kind="message",
            role=role,
            text=text,
            turn_index=turn_index,
            timestamp_ms=timestamp_ms,
            model=model,
        )

    def tool_call(
        self,
        native_tool: str,
        tool_input: Any,
        *,
        call_id: str | None,
        turn_index: int,
        timestamp_ms: int | None = None,
        model: str | None = None,
    ) -> StreamEvent:
        """A tool call, named canonically; its result arrives later through `tool_result`."""
        event = self.add(
            kind="tool_call",
            role="assistant",
            tool=canonical_tool(self.tools, native_tool, tool_input),
            native_tool=native_tool,
            tool_call_id=call_id,
            tool_input=tool_input,
            turn_index=turn_index,
            timestamp_ms=timestamp_ms,
            model=model,
        )
        if call_id:
            self._calls[call_id] = event
        return event

    def tool_result(
        self,
        call_id: str | None,
        *,
        output: str | None = None,
        status: ToolStatus | None = None,
        exit_code: int | None = None,
        end_ms: int | None = None,
        duration_ms: int | None = None,
    ) -> StreamEvent | None:
        """Pair a result with its call; fields already known are kept, so a stream that reports
        a result twice (pi: tool_execution_end, then the toolResult message) fills the gaps."""
        event = self._calls.get(call_id) if call_id else None
        if event is None:
            return None
        if event.tool_output is None:
            event.tool_output = output
        if event.status is None:
            event.status = status
        if event.exit_code is None:
            event.exit_code = exit_code
        if event.duration_ms is None:
            event.duration_ms = duration_ms
        if end_ms is not None:
            self._call_end_ms.setdefault(event.seq, end_ms)
            if event.timestamp_ms is None:
                # claude stamps only results: the call is placed in time by its result.
                event.timestamp_ms = end_ms
        return event

    def system_prompt(
        self,
        source: str,
        label: str,
        text: str,
        *,
        turn_index: int,
        timestamp_ms: int | None = None,
    ) -> None:
        """Context the CLI injected: an event in stream order and an entry in the injections."""
        if not text:
            return
        self.add(
            kind="system_prompt",
            role="system",
            source=source,
            label=label,
            text=text,
            turn_index=turn_index,
            timestamp_ms=timestamp_ms,
        )
        self.session.system_prompt_injections.append(
            SystemPromptInjection(source=source, label=label, content=text, turn_index=turn_index)
        )

    def retry(
        self,
        text: str | None,
        *,
        turn_index: int,
        timestamp_ms: int | None = None,
        detail: dict[str, Any] | None = None,
        counts: bool = True,
    ) -> None:
        """A provider or agent-level retry; `counts` says whether it is one more attempt."""
        self.add(
            kind="retry", text=text, turn_index=turn_index, timestamp_ms=timestamp_ms, detail=detail
        )
        if counts:
            self.session.retries += 1

    def error(
        self,
        text: str,
        *,
        turn_index: int,
        timestamp_ms: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """A model or API error event (the session's `error` is the parser's call)."""
        self.add(
            kind="error", text=text, turn_index=turn_index, timestamp_ms=timestamp_ms, detail=detail
        )

    # --- result --------------------------------------------------------------------------

    def finish(self, *, answer: str | None = None) -> ParsedStream:
        """Derive messages, final answer and time span; return the parsed stream."""
        session = self.session
        for event in self.events:
            if event.kind == "tool_call" and event.status is None:
                event.status = "unknown"  # the stream ended before the result
        self._attach_turn_usage()
        messages = self._messages()
        session.final_answer = answer if answer is not None else _answer(messages)
        session.start_ms = self._first_ms
        session.end_ms = self._last_ms
        return ParsedStream(session, self.events, messages)

    def _attach_turn_usage(self) -> None:
        pending = dict(self._turn_usage)
        for event in self.events:
            if event.role == "assistant" and event.turn_index in pending:
                event.token_usage = pending.pop(event.turn_index)

    def _messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        current_turn = -1
        for event in self.events:
            if event.kind == "message" and event.role == "user":
                messages.append(_message("user", event.text, event.timestamp_ms, None))
                current = None
            elif event.role == "assistant" and event.kind in ("message", "tool_call"):
                if current is None or current_turn != event.turn_index:
                    usage = self._turn_usage.get(event.turn_index)
                    current = _message("assistant", None, event.timestamp_ms, usage)
                    current_turn = event.turn_index
                    messages.append(current)
                if event.kind == "message":
                    text = event.text or ""
                    current["content"] = (
                        f"{current['content']}\n{text}" if current["content"] else text
                    )
                else:
                    current["tool_calls"].append(self._tool_call(event))
        return messages

    def _tool_call(self, event: StreamEvent) -> dict[str, Any]:
        """The call as a ToolCall's fields, and its event's `seq`."""
        return {
            "tool": event.tool or "Other",
            "input": event.tool_input,
            "output": event.tool_output,
            "id": event.tool_call_id,
            "status": event.status,
            "start_time_ms": event.timestamp_ms,
            "end_time_ms": self._call_end_ms.get(event.seq),
            "duration_ms": event.duration_ms,
            "seq": event.seq,
        }


def _message(
    role: str, content: str | None, start_ms: int | None, usage: TokenUsage | None
) -> dict[str, Any]:
    """A message's fields, as `Message` holds them when made from these."""
    return {
        "role": role,
        "name": None,
        "content": content,
        "tool_calls": [],
        "start_time_ms": start_ms,
        "end_time_ms": None,
        "duration_ms": None,
        "token_usage": usage,
        "metadata": None,
    }


def _answer(messages: list[dict[str, Any]]) -> str:
    """The last assistant message's text (final_answer's rule; a stream's content is text)."""
    for message in reversed(messages):
        if message["role"] == "assistant" and message["content"] not in (None, ""):
            return str(message["content"])
    return ""
