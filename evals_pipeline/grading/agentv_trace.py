"""AgentV's trace read model of one session: the `messages`, `trace` and `trace_summary` a code
grader receives, built the way agentv 4.42.4 builds them (`buildTraceFromMessages`,
`computeTraceSummary` in packages/core/src/evaluation/trace.ts), in its snake_case wire form.

AgentV's summary differs from the session's own `TraceSummary` on purpose: `event_count` counts
tool calls only, `error_count` is 0, `tool_durations` lists every call's milliseconds, and the
counts cover the agent's messages only; graders written for AgentV read these values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any

import orjson

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import MESSAGE_LIST, Message, PlainMessages, as_list
from evals_pipeline.models.session import Session
from evals_pipeline.suites.prompt import result_input

_UPPER = re.compile(r"[A-Z]")
# Where the transcript goes in a trace while the rest is converted and encoded: a value no
# transcript field can hold, so splitting the encoded trace on it is unambiguous.
_MESSAGES_SLOT = "\x00evals-pipeline:messages\x00"


def to_snake_case_deep(value: Any) -> Any:
    """AgentV's `toSnakeCaseDeep`: every nested key camelCase → snake_case, except keys that
    start with an upper-case letter (tool names such as `Bash`); values are left alone."""
    if isinstance(value, list):
        return [to_snake_case_deep(item) for item in value]
    if isinstance(value, dict):
        return {_snake(key): to_snake_case_deep(item) for key, item in value.items()}
    return value


@lru_cache(maxsize=4096)  # a transcript repeats a few keys thousands of times; bounded, since
# tool inputs bring keys of their own and a worker lives long
def _snake(key: str) -> str:
    if key[:1].isupper() and key[:1].isascii():
        return key
    return _UPPER.sub(lambda m: "_" + m.group(0).lower(), key)


def compact_json(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it (no spaces), whose length
    AgentV measures. orjson writes a 10 MB transcript ~5x faster than the standard library,
    which still writes what orjson refuses (integers past 64 bits, lone surrogates)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_json_bytes(value: Any) -> bytes:
    """`compact_json` in UTF-8, for a file: a long transcript's encoding goes to disk as orjson
    made it, not decoded to text and encoded back (two more copies of tens of MB)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return compact_json(value).encode()


def json_chars(encoded: bytes) -> int:
    """The length in characters of UTF-8 JSON, as the inline limit counts it."""
    return len(encoded) if encoded.isascii() else len(encoded.decode())


def iso(epoch_ms: int | None) -> str | None:
    """Epoch milliseconds as JavaScript's toISOString() prints them (AgentV's times)."""
    if epoch_ms is None:
        return None
    moment = datetime.fromtimestamp(epoch_ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def wire_messages(messages: Sequence[Message], *, snake_case: bool = False) -> list[dict[str, Any]]:
    """Messages as AgentV's provider Message on the wire: absent values and empty tool lists
    left out, times as ISO strings, no per-message token usage (AgentV's cli provider drops it);
    with `snake_case`, the keys inside content, metadata and tool inputs and outputs converted
    as `to_snake_case_deep` converts them. The models are dumped in one pydantic-core call;
    plain messages are their wire form already (shared, not copied: it is only encoded)."""
    if isinstance(messages, PlainMessages):
        return messages.rows
    dumped = MESSAGE_LIST.dump_python(as_list(messages), exclude_defaults=True, exclude=_NO_USAGE)
    # A message of a role and text alone (most of a long session) is in wire form already.
    return [
        message
        if len(message) == 2 and isinstance(message.get("content"), str)
        else _wire(message, snake_case)
        for message in dumped
    ]


_NO_USAGE = {"__all__": {"token_usage"}}
_ISO_NAMES = {"start_time_ms": "start_time", "end_time_ms": "end_time"}
_FREE_FORM = ("content", "metadata", "input", "output")  # the values whose keys are not ours


def _wire(dumped: dict[str, Any], snake_case: bool) -> dict[str, Any]:
    """A dumped message or tool call in wire form (its times ISO, in place of the ms fields)."""
    if not _ISO_NAMES.keys().isdisjoint(dumped):
        dumped = {
            _ISO_NAMES.get(key, key): iso(value) if key in _ISO_NAMES else value
            for key, value in dumped.items()
        }
    calls = dumped.get("tool_calls")
    if calls:
        dumped["tool_calls"] = [_wire(call, snake_case) for call in calls]
    if snake_case:
        for key in _FREE_FORM:
            value = dumped.get(key)
            if value is not None and not isinstance(value, str):
                dumped[key] = to_snake_case_deep(value)
    return dumped


def transcript(input_messages: list[Message], output: Sequence[Message]) -> Sequence[Message]:
    """AgentV's `buildTraceMessages`: the input then the agent's messages, unless the agent's
    output already is a whole conversation (it has user or system turns) or repeats the input.
    Plain output stays plain (models.messages.PlainMessages) when the input is plain too."""
    if not output:
        return input_messages
    plain = output if isinstance(output, PlainMessages) else None
    if plain is not None:  # asked of the plain messages, in whatever form they are held
        conversation = plain.has_role("user", "system")
        first: tuple[str, Any] = plain.first()
    else:
        conversation = any(m.role in ("user", "system") for m in output)
        first = (output[0].role, output[0].content)
    if conversation:
        return output
    if len(input_messages) == 1 and (input_messages[0].role, input_messages[0].content) == first:
        return output
    if plain is not None:  # plain still when the input is too
        dumped = MESSAGE_LIST.dump_python(input_messages, exclude_defaults=True)
        if (plain_input := PlainMessages.of(dumped)) is not None:
            return plain.after(plain_input.rows)
    return [*input_messages, *output]


@dataclass(frozen=True)
class Summary:
    """AgentV's `computeTraceSummary` over the agent's messages, with the span they cover."""

    fields: dict[str, Any]
    start_ms: int | None
    end_ms: int | None


def summarize(output: Sequence[Message]) -> Summary:
    """Tool calls per tool, durations per tool, assistant turns, earliest start, latest end."""
    if isinstance(output, PlainMessages):  # no tool calls, no times
        turns = output.assistant_turns()
        counts = {"event_count": 0, "tool_calls": {}, "error_count": 0, "llm_call_count": turns}
        return Summary(counts, None, None)
    tool_calls: dict[str, int] = {}
    durations: dict[str, list[int]] = {}
    starts: list[int] = []
    ends: list[int] = []
    for message in output:
        starts += [message.start_time_ms] if message.start_time_ms is not None else []
        ends += [message.end_time_ms] if message.end_time_ms is not None else []
        for call in message.tool_calls:
            tool_calls[call.tool] = tool_calls.get(call.tool, 0) + 1
            starts += [call.start_time_ms] if call.start_time_ms is not None else []
            ends += [call.end_time_ms] if call.end_time_ms is not None else []
            took = call.duration_ms
            if took is None and call.start_time_ms is not None and call.end_time_ms is not None:
                took = call.end_time_ms - call.start_time_ms
            if took is not None:
                durations.setdefault(call.tool, []).append(took)
    fields: dict[str, Any] = {
        "event_count": sum(tool_calls.values()),
        "tool_calls": tool_calls,
        "error_count": 0,
        "llm_call_count": sum(1 for m in output if m.role == "assistant"),
    }
    if durations:
        fields["tool_durations"] = durations
    return Summary(fields, min(starts, default=None), max(ends, default=None))


@dataclass(frozen=True)
class TranscriptFields:
    """What a trial's code-grader payloads take from its transcript, kept once the messages
    and their encodings are forgotten: `messages` inline or `messages_json_path`, `trace`
    inline or null and `trace_path`, the summary and the span."""

    messages: dict[str, Any]
    trace: dict[str, Any]
    trace_summary: dict[str, Any]
    start_ms: int | None
    end_ms: int | None


class AgentVTrace:
    """The transcript, trace and trace summary of one session as AgentV hands them to graders.

    `output` is the session's messages (the agent's side), `answer` its final answer.
    """

    def __init__(
        self, case: ResolvedCase, session: Session, output: Sequence[Message], answer: str
    ) -> None:
        self.summary = summarize(output)
        self.messages = transcript(result_input(case.input), output or _answer_only(answer))
        # Agent CLIs report their wall-clock span as AgentV's claude/codex/pi providers do; the
        # cli provider reports none, so the span comes from the transcript's own timestamps.
        reported = session.agent_kind is not None
        self.start_ms = session.start_ms if reported else self.summary.start_ms
        self.end_ms = session.end_ms if reported else self.summary.end_ms
        self._case, self._session, self._answer = case, session, answer

    def text_chars(self) -> int:
        """A lower bound on the characters of `messages` as JSON, without encoding it: the
        length of its text contents (each is in the JSON, quoted, at least as long)."""
        if isinstance(self.messages, PlainMessages):
            return self.messages.text_chars()
        return sum(len(m.content) for m in self.messages if isinstance(m.content, str))

    @cached_property
    def wire_messages(self) -> list[dict[str, Any]]:
        """The `messages` field: the transcript as AgentV Message objects, keys snake_case."""
        return wire_messages(self.messages, snake_case=True)

    @cached_property
    def wire_trace(self) -> dict[str, Any]:
        """The `trace` field, keys snake_case (its messages are `wire_messages`, converted once)."""
        return self.trace(self.wire_messages)

    @cached_property
    def encoded_messages(self) -> bytes:
        """`wire_messages` as compact JSON (UTF-8), whose length AgentV's threshold measures."""
        return compact_json_bytes(self.wire_messages)

    @cached_property
    def encoded_trace(self) -> tuple[bytes, bytes, bytes]:
        """`wire_trace` as compact JSON in three parts, the middle one `encoded_messages`
        (spliced in, not encoded again); joined only by whoever needs one document."""
        trace = {**self.wire_trace, "messages": _MESSAGES_SLOT}
        before, after = compact_json_bytes(trace).split(compact_json_bytes(_MESSAGES_SLOT), 1)
        return before, self.encoded_messages, after

    def summary_fields(self) -> dict[str, Any]:
        """The `trace_summary` field, keys in AgentV's order."""
        s = self.summary.fields
        order = ("event_count", "tool_calls", "error_count", "tool_durations", "llm_call_count")
        return {key: s[key] for key in order if key in s}

    def trace(self, wire_messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The `trace` field: the summary, the transcript, its events, metrics and provenance,
        keys snake_case (`wire_messages` already are; the events are made from them)."""
        session, case = self._session, self._case
        trace: dict[str, Any] = to_snake_case_deep(self.summary.fields)  # tool names are keys
        trace["messages"] = wire_messages
        trace["events"] = trace_events(wire_messages, self._answer, self.end_ms)
        metrics = {
            "token_usage": session.token_usage.model_dump(mode="json")
            if session.token_usage
            else None,
            "cost_usd": session.cost_usd,
            "duration_ms": session.duration_ms,
            "start_time": iso(self.start_ms),
            "end_time": iso(self.end_ms),
        }
        trace.update({key: value for key, value in metrics.items() if value is not None})
        trace["metadata"] = {
            "provider": case.target.provider,
            "target": case.target.name,
            "eval_case_id": case.test_id,
        }
        return trace


def trace_events(
    messages: list[dict[str, Any]], answer: str, end_ms: int | None = None
) -> list[dict[str, Any]]:
    """AgentV's event stream from wire messages (`wire_messages`): each message, each tool call
    and its result, the final answer."""
    events: list[dict[str, Any]] = []

    def add(event: dict[str, Any]) -> None:
        events.append({key: value for key, value in event.items() if value is not None})

    for index, message in enumerate(messages):
        # Made directly, in `add`'s key order: one per message, 10,000 in a long session.
        event = {"event_id": f"message-{index}", "ordinal": len(events), "type": "message"}
        stamp, took = message.get("start_time"), message.get("duration_ms")
        if stamp is not None:
            event["timestamp"] = stamp
        if took is not None:
            event["duration_ms"] = took
        event["message"] = _trace_message(message)
        event["metadata"] = {"message_index": index}
        events.append(event)
        for tool_index, call in enumerate(message.get("tool_calls", ())):
            call_id = f"message-{index}-tool-{tool_index}"
            tool = {
                "name": call["tool"],
                "call_id": call.get("id"),
                "input": call.get("input"),
                "output": call.get("output"),
                "status": call.get("status") or "ok",
            }
            where = {"message_index": index, "tool_index": tool_index}
            add(
                {
                    "event_id": call_id,
                    "parent_event_id": f"message-{index}",
                    "ordinal": len(events),
                    "type": "tool_call",
                    "timestamp": call.get("start_time"),
                    "duration_ms": call.get("duration_ms"),
                    "tool": {k: v for k, v in tool.items() if v is not None},
                    "metadata": where,
                }
            )
            if tool["output"] is not None:
                result = {k: tool[k] for k in ("name", "call_id", "output", "status")}
                add(
                    {
                        "event_id": f"{call_id}-result",
                        "parent_event_id": call_id,
                        "ordinal": len(events),
                        "type": "tool_result",
                        "timestamp": call.get("end_time"),
                        "tool": {k: v for k, v in result.items() if v is not None},
                        "metadata": where,
                    }
                )
    final = next(
        (i for i in reversed(range(len(messages))) if messages[i]["role"] == "assistant"),
        None,
    )
    if final is not None:
        last = messages[final]
        stamp = last.get("end_time", last.get("start_time"))
        add(
            {
                "event_id": "final-response",
                "parent_event_id": f"message-{final}",
                "ordinal": len(events),
                "type": "final_response",
                "timestamp": stamp if stamp is not None else iso(end_ms),
                "message": {**_trace_message(last), "content": answer},
                "metadata": {"message_index": final},
            }
        )
    return events


_TRACE_MESSAGE_KEYS = ("role", "name", "content", "metadata")


def _trace_message(message: dict[str, Any]) -> dict[str, Any]:
    """AgentV's `toTraceMessage`: role, name, content, metadata (its cli provider keeps no
    per-message token usage, so neither does this). A message of a role and content alone is
    that already and is shared, not copied: the trace is only encoded, never changed."""
    if len(message) == 2 and "role" in message and "content" in message:
        return message
    return {key: message[key] for key in _TRACE_MESSAGE_KEYS if key in message}


def _answer_only(answer: str) -> list[Message]:
    """AgentV's stand-in when a provider returns no messages: the answer as one assistant turn."""
    return [Message(role="assistant", content=answer)]
