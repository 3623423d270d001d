"""The code-grader stdin payload: AgentV's contract (reference §6.1), with paths for the bulk.

Every field agentv 4.42.4 sends, with its values and its snake_case keys, plus `answer` (the
final answer's old name, still in AgentV's grader docs) and our paths. One rule decides what
travels inline: a field whose JSON encoding is longer than 50,000 characters (AgentV's
FILE_BACKED_OUTPUT_THRESHOLD) goes by path instead, so stdin stays small however long the
session was: the answer by `output_path`, the transcript by `messages_path` (the session's
Parquet file, always sent; `messages` is then absent and `trace` null). The transcript and trace
are also written as JSON files (`messages_json_path`, `trace_path`) only for a case one of whose
code graders asks for them (`messages_format: json`): a 10 MB session's JSON is ~30 MB more to
write, for graders that mostly read the answer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.grading.agentv_trace import (
    TranscriptFields,
    compact_json_bytes,
    iso,
    json_chars,
    to_snake_case_deep,
    wire_messages,
)
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.models.assertions import AssertionSpec, CodeGraderAssertion
from evals_pipeline.models.assertions.spec import walk_assertions
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import INLINE_OUTPUT_LIMIT, Session, fits_inline


def build_grader_payload(
    case: ResolvedCase, session: Session, spec: CodeGraderAssertion
) -> dict[str, Any]:
    """The JSON document a code grader reads on stdin, snake_case as AgentV sends it."""
    return grader_payload(spec, GradingContext(case, session))


def grader_payload(spec: CodeGraderAssertion, ctx: GradingContext) -> dict[str, Any]:
    """`build_grader_payload` for a context whose lazily loaded fields other graders share."""
    return stdin_payload(ctx, spec.config or None, messages_json=spec.messages_format == "json")


def stdin_payload(
    ctx: GradingContext, config: dict[str, Any] | None, *, messages_json: bool = False
) -> dict[str, Any]:
    """The payload for any program AgentV feeds the session on stdin (a code grader, an
    executable prompt template): `config` is that program's, `messages_json` asks for the
    transcript as a JSON file too."""
    case, session = ctx.case, ctx.session
    usage = session.token_usage
    output = _output_fields(ctx)
    fields = _transcript_fields(ctx)
    messages, traced = dict(fields.messages), dict(fields.trace)
    # AgentV's own fields, in its order, keys converted as its toSnakeCaseDeep converts them.
    payload: dict[str, Any] = to_snake_case_deep(
        {
            "criteria": case.criteria,
            "expected_output": wire_messages(case.expected_output),
            "output": output["output"],
            "messages": None,  # set below: already converted
            **({"output_path": output["output_path"]} if "output_path" in output else {}),
            "input_files": case.input_files,
            "input": wire_messages([_agentv_file_blocks(m) for m in case.input]),
            "metadata": case.metadata,
            "trace": None,  # set below: already converted
            "trace_summary": fields.trace_summary,
            "token_usage": usage.model_dump(mode="json") if usage else None,
            "cost_usd": session.cost_usd,
            "duration_ms": session.duration_ms,
            "start_time": iso(fields.start_ms),
            "end_time": iso(fields.end_ms),
            "file_changes": session.file_changes,
            # Every run here has a folder (an empty one when the suite configures no workspace);
            # AgentV sends null then, having run the agent in the eval's folder.
            "workspace_path": session.workspace_path,
            "config": config,
        }
    )
    # A file-backed transcript leaves `messages` out: null would fail the AgentV SDK's schema
    # (an optional array), absent gives its default [] and lets raw graders test for the key.
    if "messages" in messages:
        payload["messages"] = messages.pop("messages")
    else:
        del payload["messages"]
    payload["trace"] = traced.pop("trace")
    # Ours: AgentV's documented alias, the paths, the instants in epoch ms, which case this is.
    payload["answer"] = output["output"]
    payload["messages_path"] = os.path.abspath(session.messages_path)
    payload.update(messages)
    if messages_json and "messages_json_path" not in payload:
        payload["messages_json_path"] = str(messages_json_copy(ctx))
    payload.update(traced)
    payload["start_time_ms"] = fields.start_ms
    payload["end_time_ms"] = fields.end_ms
    payload["test_id"] = case.test_id
    payload["agent"] = case.agent
    return payload


def messages_json_copy(ctx: GradingContext) -> Path:
    """The transcript (the payload's `messages`) as a JSON file, written once per session."""
    return _write_once(_sidecar(ctx.session, ".json"), lambda: ctx.agentv_trace.encoded_messages)


_ENCODING = threading.Lock()


def prepare_transcript_fields(ctx: GradingContext) -> None:
    """Make the trial's transcript fields now, before its first code grader asks (prefetch.py
    makes the next case's while this one's graders run)."""
    _transcript_fields(ctx)


def _transcript_fields(ctx: GradingContext) -> TranscriptFields:
    """The fields made from the transcript, once per trial. Trials are encoded one at a time
    and their messages and encodings forgotten once made: concurrent trials of long sessions
    then hold these fields and paths, not four 60 MB encodings of a 10 MB session at once."""
    if ctx.transcript_fields is None:
        with _ENCODING, gc_paused():  # ~100,000 objects made for one long session, none cyclic
            trace = ctx.agentv_trace
            fits = _fits(ctx)  # one measure of a long transcript's text, for both fields
            ctx.transcript_fields = TranscriptFields(
                messages=_messages_fields(ctx, fits),
                trace=_trace_fields(ctx, fits),
                trace_summary=trace.summary_fields(),
                start_ms=trace.start_ms,
                end_ms=trace.end_ms,
            )
            # Freed before the collector resumes: its first pass would walk them all.
            del trace
            ctx.release_transcript()
    return ctx.transcript_fields


def wants_json(assertions: list[AssertionSpec]) -> bool:
    """Whether a code grader among `assertions` (composites' members included) asks for the
    transcript as JSON files (`messages_format: json`)."""
    return any(
        isinstance(spec, CodeGraderAssertion) and spec.messages_format == "json"
        for _, spec in walk_assertions(assertions)
    )


def _fits(ctx: GradingContext) -> bool:
    """False when the transcript's text alone is over the inline limit: then neither `messages`
    nor `trace` is inline, and unless a grader asks for JSON, a 10 MB transcript is not
    encoded (~0.1 s of CPU a session) only to be measured."""
    return ctx.agentv_trace.text_chars() <= INLINE_OUTPUT_LIMIT


def _messages_fields(ctx: GradingContext, fits: bool) -> dict[str, Any]:
    """`messages` inline when small, else nothing (the Parquet `messages_path` is sent), and
    `messages_json_path` too when a grader of the case asks for JSON."""
    trace = ctx.agentv_trace
    if fits and json_chars(trace.encoded_messages) <= INLINE_OUTPUT_LIMIT:
        return {"messages": trace.wire_messages}
    if wants_json(ctx.case.assertions):
        return {"messages_json_path": str(messages_json_copy(ctx))}
    return {}


def _trace_fields(ctx: GradingContext, fits: bool) -> dict[str, Any]:
    """`trace` inline when small, else null, with `trace_path` when a grader asks for JSON."""
    trace = ctx.agentv_trace
    if fits and sum(map(json_chars, trace.encoded_trace)) <= INLINE_OUTPUT_LIMIT:
        return {"trace": trace.wire_trace}
    if not wants_json(ctx.case.assertions):
        return {"trace": None}
    path = _write_once(_sidecar(ctx.session, ".trace.json"), lambda: trace.encoded_trace)
    return {"trace": None, "trace_path": str(path)}


def _output_fields(ctx: GradingContext) -> dict[str, Any]:
    """`output` inline when its JSON encoding is small, else null plus `output_path`."""
    session = ctx.session
    # An answer the enricher already put in a file is passed on without reading it.
    path = session.output_path if session.output is None else None
    if path is None:
        if fits_inline(ctx.output):
            return {"output": ctx.output}
        encoded = compact_json_bytes(ctx.output)
        path = session.output_path or str(
            _write_once(_sidecar(session, ".output.json"), lambda: encoded)
        )
    return {"output": None, "output_path": os.path.abspath(path)}


def _sidecar(session: Session, suffix: str) -> Path:
    """A file beside the session's Parquet transcript: `messages.parquet` → `messages<suffix>`."""
    return Path(session.messages_path).with_suffix(suffix)


def _write_once(path: Path, render: Callable[[], bytes | Iterable[bytes]]) -> Path:
    """Write `render()` (UTF-8, or parts written one after another, never joined in memory) to
    `path` unless it exists; atomic, since graders run concurrently."""
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        rendered = render()
        with tmp.open("wb") as handle:
            handle.writelines([rendered] if isinstance(rendered, bytes) else rendered)
        os.replace(tmp, path)
    return path.absolute()


def _agentv_file_blocks(message: Message) -> Message:
    """File blocks as AgentV's loader leaves them: `path` as written, `resolved_path` absolute,
    and the file's `text`."""
    if not isinstance(message.content, list):
        return message
    blocks = [
        {
            "type": "file",
            "value": block.get("value"),
            "path": str(block.get("value") or "").lstrip("/\\"),
            "text": block.get("text"),
            "resolved_path": block.get("path"),
        }
        if isinstance(block, dict) and block.get("type") == "file"
        else block
        for block in message.content
    ]
    return message.model_copy(update={"content": blocks})
