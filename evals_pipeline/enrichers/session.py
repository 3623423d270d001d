"""Turn a raw agent run into an enriched session: messages stored once, facts summarised."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from evals_pipeline.enrichers.cli_output import (
    ParsedOutput,
    parse_message_lines,
    parse_output_document,
)
from evals_pipeline.models.messages import Message, final_answer
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session, TraceSummary, fits_inline
from evals_pipeline.storage.messages import write_messages

FAILED_TOOL_STATUSES = {"error", "timeout", "cancelled"}


def trace_summary(messages: list[Message]) -> TraceSummary:
    """Count events, tool calls per tool, failed tool calls and model turns."""
    calls = [call for m in messages for call in m.tool_calls]
    durations: Counter[str] = Counter()
    for call in calls:
        if call.duration_ms is not None:
            durations[call.tool] += call.duration_ms
    return TraceSummary(
        event_count=len(messages) + len(calls),
        tool_calls=dict(Counter(call.tool for call in calls)),
        error_count=sum(1 for call in calls if call.status in FAILED_TOOL_STATUSES),
        tool_durations=dict(durations),
        llm_call_count=sum(1 for m in messages if m.role == "assistant"),
    )


def _parse(run: AgentRun) -> ParsedOutput:
    if run.output_file_path:
        path = Path(run.output_file_path)
        text = path.read_text(errors="replace")
        return parse_message_lines(text) if path.suffix == ".jsonl" else parse_output_document(text)
    if run.stdout_path and Path(run.stdout_path).exists():
        parsed = parse_output_document(Path(run.stdout_path).read_text(errors="replace"))
        parsed.warnings.append("no {OUTPUT_FILE} was written: stdout was taken as the answer")
        return parsed
    return ParsedOutput(messages=[])


def enrich_run(run: AgentRun, session_dir: Path) -> Session:
    """Enrich one run; the messages Parquet file is written even for a failed run (empty)."""
    session_dir.mkdir(parents=True, exist_ok=True)
    messages_path = session_dir / "messages.parquet"
    failed = run.error is not None
    parsed = ParsedOutput(messages=[]) if failed else _parse(run)
    write_messages(parsed.messages, messages_path)
    answer = final_answer(parsed.messages)
    output_path = None
    if not fits_inline(answer):
        output_path = session_dir / "output.json"
        output_path.write_text(json.dumps(answer, ensure_ascii=False))
    return Session(
        case_key=run.case_key,
        agent=run.agent,
        trial=run.trial,
        status="timed_out" if run.timed_out else "agent_error" if failed else "ok",
        error=run.error,
        stderr=run.stderr,
        messages_path=str(messages_path),
        message_count=len(parsed.messages),
        output=None if output_path else answer,
        output_path=str(output_path) if output_path else None,
        output_chars=len(answer),
        trace_summary=trace_summary(parsed.messages),
        token_usage=parsed.token_usage,
        cost_usd=parsed.cost_usd,
        duration_ms=parsed.duration_ms if parsed.duration_ms is not None else run.duration_ms,
        start_ms=run.start_ms,
        end_ms=run.end_ms,
        workspace_path=run.workspace_path,
        file_changes=run.file_changes,
        parse_warnings=parsed.warnings,
    )
