"""Canonical messages: the transcript shape shared by adapters, enrichers, graders and reports.

Field names follow AgentV's Message contract (snake_case) so existing graders read them unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Literal, get_args, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Role = Literal["system", "user", "assistant", "tool"]
ToolStatus = Literal["ok", "error", "timeout", "cancelled", "unknown"]


class TokenUsage(BaseModel):
    """Token counts of one message or one whole run."""

    model_config = ConfigDict(extra="ignore")

    input: int = 0
    output: int = 0
    cached: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.cached

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input=self.input + other.input,
            output=self.output + other.output,
            cached=self.cached + other.cached,
        )


class ToolCall(BaseModel):
    """One tool invocation with its result, paired."""

    model_config = ConfigDict(extra="ignore")

    tool: str
    input: Any = None
    output: Any = None
    id: str | None = None
    status: ToolStatus | None = None
    start_time_ms: int | None = None
    end_time_ms: int | None = None
    duration_ms: int | None = None


class Message(BaseModel):
    """One transcript message; `content` is text, a structured object, or a list of blocks."""

    model_config = ConfigDict(extra="ignore")

    role: Role
    name: str | None = None
    content: str | dict[str, Any] | list[Any] | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    start_time_ms: int | None = None
    end_time_ms: int | None = None
    duration_ms: int | None = None
    token_usage: TokenUsage | None = None
    metadata: dict[str, Any] | None = None

    def text(self) -> str:
        """The message as plain text: text blocks joined, objects JSON-encoded (AgentV's rule)."""
        return content_text(self.content)


def content_text(content: str | dict[str, Any] | list[Any] | None) -> str:
    """Flatten message content to text the way AgentV computes a final answer."""
    import json

    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return json.dumps(content, ensure_ascii=False)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type", "text") == "text":
            value = block.get("text", block.get("value", ""))
            parts.append(value if isinstance(value, str) else json.dumps(value))
        elif isinstance(block, dict) and block.get("type") == "file":
            parts.append(str(block.get("text") or ""))
    return "\n".join(p for p in parts if p)


def input_file_paths(messages: Sequence[Message]) -> list[str]:
    """Every `type: file` block's absolute path, in message order: a test's input files
    (AgentV's `collectResolvedInputFilePaths`, whatever wrote them: `input_files` or blocks)."""
    return [
        str(block["path"])
        for message in messages
        if isinstance(message.content, list)
        for block in message.content
        if isinstance(block, dict) and block.get("type") == "file" and block.get("path")
    ]


def final_answer(messages: Sequence[Message]) -> str:
    """The last assistant message's content as text; empty when there is none."""
    if isinstance(messages, PlainMessages):
        return messages.answer()
    for message in reversed(messages):
        if message.role == "assistant" and message.content not in (None, "", []):
            return message.text()
    return ""


def iso_to_ms(value: Any) -> int | None:
    """An ISO-8601 timestamp (AgentV's wire form) as epoch milliseconds (our stored form)."""
    if isinstance(value, int | float):
        return int(value)
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def message_from_wire(raw: Any) -> Message:
    """One message in AgentV's wire form (ISO `start_time`/`end_time`) as a Message (epoch ms)."""
    return messages_from_wire([raw])[0]


MESSAGE_LIST: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""A whole transcript validated (or dumped) in one pydantic-core call, not a model per message."""


def _answers(row: dict[str, Any]) -> bool:
    return row["role"] == "assistant" and row["content"] != ""


class RowMessages(Sequence[Message]):
    """Messages kept as the JSON objects they were parsed from (their stored and wire form),
    made models only when an item is read, all in one call: most transcripts are written and
    handed to graders without a model per message."""

    __slots__ = ("_models", "_rows")

    def __init__(self, rows: list[dict[str, Any]] | None) -> None:
        self._rows = rows
        self._models: list[Message] | None = None

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Each message's JSON object."""
        if self._rows is None:
            self._rows = self._make_rows()
        return self._rows

    def _make_rows(self) -> list[dict[str, Any]]:
        raise NotImplementedError(f"a {type(self).__name__} made without rows makes them itself")

    def models(self) -> list[Message]:
        """The messages as models, made on first use."""
        if self._models is None:
            self._models = MESSAGE_LIST.validate_python(self.rows)
        return self._models

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        return self.models()[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self.models())


class PlainMessages(RowMessages):
    """A transcript of messages that are a role and text alone (a long CLI session's usual
    shape), kept as the JSON objects they were parsed from, which already are their stored and
    wire form: written and handed to graders without a model per message (10,000 models cost
    ~60 ms to make, dump twice and free). Reading an item makes every model, in one call.

    A subclass may hold them in another form (storage/arrow_messages.py: Arrow columns) and
    make `rows` only when asked; the counts and the answer are then its own."""

    __slots__ = ()

    @classmethod
    def of(cls, raws: list[Any]) -> PlainMessages | None:
        """`raws` as plain messages when every one is `{"role": <a Role>, "content": <text>}`
        and nothing else; None otherwise (then they are validated into models)."""
        for raw in raws:
            if (
                type(raw) is not dict
                or len(raw) != 2
                or type(raw.get("content")) is not str
                or raw.get("role") not in _ROLES
            ):
                return None
        return cls(raws)

    def assistant_turns(self) -> int:
        """How many messages are the assistant's (the model turns a trace summary counts)."""
        return sum(1 for row in self.rows if row["role"] == "assistant")

    def text_chars(self) -> int:
        """The characters of every message's text together."""
        return sum(len(row["content"]) for row in self.rows)

    def has_role(self, *roles: str) -> bool:
        """Whether any message is of one of `roles`."""
        return any(row["role"] in roles for row in self.rows)

    def first(self) -> tuple[str, str]:
        """The first message's role and text (there is one)."""
        row = self.rows[0]
        return row["role"], row["content"]

    def after(self, rows: list[dict[str, Any]]) -> PlainMessages:
        """These messages after `rows` (plain messages' rows, a few: a case's input)."""
        return PlainMessages([*rows, *self.rows])

    def answer(self) -> str:
        """The last assistant message's text that is not empty; empty when there is none."""
        return next((r["content"] for r in reversed(self.rows) if _answers(r)), "")


_ROLES = frozenset(get_args(Role))


def as_list(messages: Sequence[Message]) -> list[Message]:
    """`messages` as a list of models (a PlainMessages' models made)."""
    if isinstance(messages, PlainMessages):
        return messages.models()
    return messages if isinstance(messages, list) else list(messages)


def messages_from_wire(raws: list[Any]) -> list[Message]:
    """Messages in AgentV's wire form as Messages, validated in one call: a 10,000-message
    transcript takes ~20 ms, against ~100 ms a message at a time. Only messages that carry times
    are copied (ISO strings to epoch ms)."""
    return MESSAGE_LIST.validate_python([_timed_message(raw) for raw in raws])


def _timed_message(raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise TypeError(f"expected a JSON object, not {type(raw).__name__}")
    calls = raw.get("tool_calls")
    if calls or not _TIME_KEYS.isdisjoint(raw):
        raw = _timed(raw)
        if calls:
            raw["tool_calls"] = [_timed(call) for call in calls]
    return raw


_TIME_KEYS = frozenset(("start_time", "end_time", "start_time_ms", "end_time_ms"))


def _timed(raw: Any) -> dict[str, Any]:
    """ISO start/end times as epoch ms, and the duration from them when none is given."""
    if not isinstance(raw, dict):
        raise TypeError(f"expected a JSON object, not {type(raw).__name__}")
    data = dict(raw)
    for prefix in ("start", "end"):
        if f"{prefix}_time" in data and f"{prefix}_time_ms" not in data:
            data[f"{prefix}_time_ms"] = iso_to_ms(data.pop(f"{prefix}_time"))
    start, end = data.get("start_time_ms"), data.get("end_time_ms")
    if data.get("duration_ms") is None and start is not None and end is not None:
        data["duration_ms"] = end - start
    return data
