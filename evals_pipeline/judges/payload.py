"""The code-grader stdin payload: AgentV's contract (reference §6.1), with paths instead of bulk.

The transcript never travels inline: graders get `messages_path` (the session's Parquet file) and,
for a large answer, `output_path`, so the payload stays a few KB however long the session was.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals_pipeline.judges.context import GradingContext
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session, fits_inline


def build_grader_payload(
    case: ResolvedCase, session: Session, spec: CodeGraderAssertion
) -> dict[str, Any]:
    """The JSON document a code grader reads on stdin, snake_case as AgentV sends it."""
    return grader_payload(spec, GradingContext(case, session))


def grader_payload(spec: CodeGraderAssertion, ctx: GradingContext) -> dict[str, Any]:
    """`build_grader_payload` for a context whose lazily loaded fields other graders share."""
    case, session = ctx.case, ctx.session
    usage = session.token_usage
    payload: dict[str, Any] = {
        "criteria": case.criteria,
        "expected_output": [_message_dict(m) for m in case.expected_output],
        **_output_fields(ctx),
        # Present for graders that index payload["messages"]; the transcript is at messages_path.
        "messages": None,
        "messages_path": os.path.abspath(session.messages_path),
        "input_files": list(case.input_files),
        "input": [_message_dict(_without_file_text(m)) for m in case.input],
        "metadata": case.metadata,
        "trace": None,
        "trace_summary": session.trace_summary.model_dump(mode="json"),
        "token_usage": usage.model_dump(mode="json") if usage else None,
        "cost_usd": session.cost_usd,
        "duration_ms": session.duration_ms,
        "start_time": _iso(session.start_ms),
        "end_time": _iso(session.end_ms),
        "start_time_ms": session.start_ms,
        "end_time_ms": session.end_ms,
        "file_changes": session.file_changes,
        "workspace_path": session.workspace_path,
        "config": spec.config,
        "test_id": case.test_id,
        "agent": case.agent,
    }
    if spec.messages_format == "json":
        payload["messages_json_path"] = str(messages_json_copy(ctx))
    return payload


def messages_json_copy(ctx: GradingContext) -> Path:
    """The session's messages as a JSON array next to the Parquet file, written once per session."""
    path = Path(ctx.session.messages_path).with_suffix(".json")
    return _write_once(
        path, lambda: json.dumps([_message_dict(m) for m in ctx.messages], ensure_ascii=False)
    )


def _output_fields(ctx: GradingContext) -> dict[str, Any]:
    """`output` inline when its JSON encoding is small, else null plus `output_path`."""
    session = ctx.session
    # An answer the enricher already put in a file is passed on without reading it.
    path = session.output_path if session.output is None else None
    if path is None:
        if fits_inline(ctx.output):
            return {"output": ctx.output}
        encoded = json.dumps(ctx.output, ensure_ascii=False)
        path = session.output_path or str(
            _write_once(Path(session.messages_path).with_suffix(".output.json"), lambda: encoded)
        )
    return {"output": None, "output_path": os.path.abspath(path)}


def _write_once(path: Path, render: Callable[[], str]) -> Path:
    """Write `render()` to `path` unless it exists; atomic, since graders run concurrently."""
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(render(), encoding="utf-8")
        os.replace(tmp, path)
    return path.absolute()


def _message_dict(message: Message) -> dict[str, Any]:
    return message.model_dump(mode="json", exclude_none=True)


def _without_file_text(message: Message) -> Message:
    """Input files are passed by path; their inlined text would only bloat every payload."""
    if not isinstance(message.content, list):
        return message
    blocks = [
        {k: v for k, v in block.items() if k != "text"}
        if isinstance(block, dict) and block.get("type") == "file"
        else block
        for block in message.content
    ]
    return message.model_copy(update={"content": blocks})


def _iso(epoch_ms: int | None) -> str | None:
    """Epoch milliseconds as JavaScript's toISOString() prints them (AgentV's start/end_time)."""
    if epoch_ms is None:
        return None
    moment = datetime.fromtimestamp(epoch_ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"
