"""AgentV's execution traces (`agentv.trace.v1`) as a replay source, read as AgentV 4.42.4 reads
them (replay-trace-envelopes.ts, trace-envelope.ts).

An envelope holds one test's OpenTelemetry-style spans. Replay keeps only the chat spans, each an
assistant message (`gen_ai.output.messages`) with the tool spans under it as its tool calls, in
AgentV's span order; usage, cost and duration come from the root span. The transcript events an
envelope may also carry are not read, as there.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals_pipeline.errors import EvalsPipelineError

SCHEMA_VERSION = "agentv.trace.v1"


class TraceError(ValueError, EvalsPipelineError):
    """A trace file that cannot be read, or an envelope replay cannot use."""


class _Strict(BaseModel):
    # AgentV's wire schemas are strict: an unknown key makes the record invalid.
    model_config = ConfigDict(extra="forbid")


class TraceEval(_Strict):
    eval_id: str | None = None
    eval_path: str | None = None
    suite: str | None = None
    test_id: str
    target: str
    source_target: str | None = None
    attempt: int | None = Field(default=None, ge=0)
    variant: str | None = None
    run_id: str | None = None
    category: str | None = None
    experiment: str | None = None


class SpanStatus(_Strict):
    code: Literal["UNSET", "OK", "ERROR"]
    message: str | None = None


class SpanEvent(_Strict):
    name: str
    time_unix_nano: str | None = None
    attributes: dict[str, Any] | None = None


class Span(_Strict):
    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    name: str
    kind: str
    start_time_unix_nano: str
    end_time_unix_nano: str
    status: SpanStatus
    attributes: dict[str, Any]
    events: list[SpanEvent] | None = None

    @property
    def is_chat(self) -> bool:
        attributes = self.attributes
        return (
            attributes.get("gen_ai.operation.name") == "chat"
            or attributes.get("openinference.span.kind") == "LLM"
        )

    @property
    def is_tool(self) -> bool:
        attributes = self.attributes
        return (
            attributes.get("gen_ai.operation.name") == "execute_tool"
            or attributes.get("openinference.span.kind") == "TOOL"
        )


class TraceBody(_Strict):
    format: Literal["otlp_openinference_spans"]
    trace_id: str
    root_span_id: str
    resource: dict[str, Any] | None = None
    scope: dict[str, Any] | None = None
    spans: list[Span]


class TraceReplay(_Strict):
    lookup_key: dict[str, Any] | None = None
    fixture_id: str | None = None
    source_fixture_path: str | None = None


class TraceEnvelope(_Strict):
    """One test's execution trace; the parts replay reads are typed, the rest kept as given."""

    schema_version: Literal["agentv.trace.v1"]
    artifact_id: str
    created_at: str
    eval: TraceEval
    projection_identity: dict[str, Any] | None = None
    export_metadata: dict[str, Any] | None = None
    replay: TraceReplay | None = None
    trace: TraceBody
    source: dict[str, Any]
    capture: dict[str, Any]
    conversion_warnings: list[dict[str, Any]] | None = None
    artifacts: dict[str, str] | None = None
    scores: list[dict[str, Any]] | None = None

    def identity(self) -> dict[str, Any]:
        """The replay identity, in a fixture record's keys: eval fields, else the lookup key."""
        key = (self.replay.lookup_key if self.replay else None) or {}

        def text(name: str) -> str | None:
            value = key.get(name)
            return value if isinstance(value, str) and value.strip() else None

        attempt = key.get("attempt")
        if not (isinstance(attempt, int) and not isinstance(attempt, bool) and attempt >= 0):
            attempt = None
        evaluation = self.eval
        source_target = _first(evaluation.source_target, text("source_target"))
        return {
            "suite": _first(evaluation.suite, text("suite")),
            "eval_path": _first(evaluation.eval_path, text("eval_path")),
            "test_id": evaluation.test_id,
            "source_target": _first(source_target, evaluation.target),
            "attempt": _first(evaluation.attempt, attempt, 0),
            "variant": _first(evaluation.variant, text("variant")),
        }


def read_traces(path: Path) -> list[tuple[TraceEnvelope, int | None]]:
    """The envelopes of a trace file (one JSON envelope, a JSON array, or JSONL), each with its
    line number when JSONL; TraceError names the file (and line) that is wrong."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(
            f"Execution trace replay source not found or unreadable: {path}: {exc}"
        ) from None
    documents: list[tuple[Any, int | None]] = []
    if raw.strip():
        try:
            parsed = json.loads(raw)
            items = parsed if isinstance(parsed, list) else [parsed]
            documents = [(item, None) for item in items]
        except json.JSONDecodeError:
            for number, line in enumerate(raw.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    documents.append((json.loads(line), number))
                except json.JSONDecodeError as exc:
                    raise TraceError(
                        f"Invalid execution trace JSONL at {path}:{number}: {exc}"
                    ) from None
    envelopes: list[tuple[TraceEnvelope, int | None]] = []
    for document, line_number in documents:
        try:
            envelopes.append((TraceEnvelope.model_validate(document), line_number))
        except ValidationError as exc:
            where = f"{path}:{line_number}" if line_number is not None else str(path)
            first = exc.errors(include_url=False)[0]
            at = ".".join(str(part) for part in first["loc"]) or "(record)"
            raise TraceError(
                f"Invalid execution trace replay record at {where}: `{at}`: {first['msg']} "
                f"(a {SCHEMA_VERSION} envelope, as `agentv eval` writes to outputs/trace.json)"
            ) from None
    return envelopes


def replayed_output(envelope: TraceEnvelope, where: str) -> dict[str, Any]:
    """The envelope as a cli output file: the chat spans' messages, usage, cost and duration."""
    spans = sorted(envelope.trace.spans, key=functools.cmp_to_key(_span_order))
    tools_by_parent: dict[str, list[Span]] = {}
    for span in spans:
        if span.is_tool:
            parent = span.parent_span_id or envelope.trace.root_span_id
            tools_by_parent.setdefault(parent, []).append(span)
    messages: list[dict[str, Any]] = []
    for span in spans:
        if not span.is_chat:
            continue
        message: dict[str, Any] = {"role": "assistant"}
        if "gen_ai.output.messages" in span.attributes:
            message["content"] = span.attributes["gen_ai.output.messages"]
        calls = [_tool_call(tool) for tool in tools_by_parent.get(span.span_id, [])]
        if calls:
            message["tool_calls"] = calls
        usage = _token_usage(span.attributes)
        if usage:
            message["token_usage"] = usage
        messages.append(_drop_none({**message, **_timing(span)}))
    if not messages:
        raise TraceError(
            f"Execution trace replay source {where} cannot project to provider Message[]: "
            "no chat spans found"
        )
    if messages[-1].get("content") is None:
        raise TraceError(
            f"Execution trace replay source {where} is missing assistant output content; "
            "replay requires a full-content execution trace before grading"
        )
    root = next((s for s in envelope.trace.spans if s.span_id == envelope.trace.root_span_id), None)
    output: dict[str, Any] = {"output": messages}
    if root is not None:
        attributes = root.attributes
        duration = _number(attributes, "agentv.trace.duration_ms")
        timing = _timing(root)
        output |= _drop_none(
            {
                "token_usage": _token_usage(attributes),
                "cost_usd": _number(attributes, "agentv.trace.cost_usd"),
                "duration_ms": duration if duration is not None else timing.get("duration_ms"),
                "start_time": timing.get("start_time"),
                "end_time": timing.get("end_time"),
            }
        )
    return output


def _span_order(first: Span, second: Span) -> int:
    """AgentV's compareSpanTime: start, then parent before child, then end, then span id."""
    by_start = _compare_nanos(first.start_time_unix_nano, second.start_time_unix_nano)
    if by_start:
        return by_start
    if first.span_id == second.parent_span_id:
        return -1
    if second.span_id == first.parent_span_id:
        return 1
    by_end = _compare_nanos(first.end_time_unix_nano, second.end_time_unix_nano)
    if by_end:
        return by_end
    return (first.span_id > second.span_id) - (first.span_id < second.span_id)


def _compare_nanos(first: str, second: str) -> int:
    try:
        left, right = int(first), int(second)
    except ValueError:
        left, right = first, second  # type: ignore[assignment]
    return (left > right) - (left < right)


def _tool_call(span: Span) -> dict[str, Any]:
    attributes = span.attributes
    name = _text(attributes, "gen_ai.tool.name") or _text(attributes, "tool.name")
    call_id = _text(attributes, "gen_ai.tool.call.id") or _text(attributes, "tool.id")
    return _drop_none(
        {
            "tool": name or span.name.removeprefix("execute_tool").lstrip(),
            "id": call_id or span.span_id,
            "input": attributes.get("gen_ai.tool.call.arguments"),
            "output": attributes.get("gen_ai.tool.call.result"),
            "status": "error" if span.status.code == "ERROR" else "ok",
            **_timing(span),
        }
    )


def _timing(span: Span) -> dict[str, Any]:
    try:
        start, end = int(span.start_time_unix_nano), int(span.end_time_unix_nano)
    except ValueError:
        return {}
    return _drop_none(
        {
            "start_time": _iso(start),
            "end_time": _iso(end),
            "duration_ms": (end - start) / 1_000_000 if end >= start else None,
        }
    )


def _iso(nanos: int) -> str:
    moment = datetime.fromtimestamp(nanos // 1_000_000 / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _token_usage(attributes: dict[str, Any]) -> dict[str, Any] | None:
    prompt = _number(attributes, "gen_ai.usage.input_tokens")
    completion = _number(attributes, "gen_ai.usage.output_tokens")
    if prompt is None or completion is None:
        return None
    return _drop_none(
        {
            "input": prompt,
            "output": completion,
            "cached": _number(attributes, "gen_ai.usage.cache_read.input_tokens"),
            "reasoning": _number(attributes, "gen_ai.usage.reasoning.output_tokens"),
        }
    )


def _number(attributes: dict[str, Any], key: str) -> float | None:
    value = attributes.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if value == value and abs(value) != float("inf") else None


def _text(attributes: dict[str, Any], key: str) -> str | None:
    value = attributes.get(key)
    return value if isinstance(value, str) else None


def _first(*values: Any) -> Any:
    """The first value that is not None (JavaScript's `??` chain)."""
    return next((value for value in values if value is not None), None)


def _drop_none(value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if item is not None}
