"""Turn a raw agent run into an enriched session: messages and events stored once, facts summarised.

Two kinds of run: an agent CLI's JSONL stream (claude-code, codex, pi-agent), parsed into the
canonical event model, and AgentV's `cli` output contract (an output file or plain stdout).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.agents.registry import parse_stream, read_stream
from evals_pipeline.enrichers.builder import ParsedStream
from evals_pipeline.enrichers.cli_output import (
    ParsedOutput,
    parse_message_lines,
    parse_output_document,
)
from evals_pipeline.enrichers.milestones import compute_milestones
from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.models.errors import RecordError, stderr_tail
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import Message, PlainMessages, TokenUsage, final_answer
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session, TraceSummary, fits_inline
from evals_pipeline.models.targets import Pricing

FAILED_TOOL_STATUSES = {"error", "timeout", "cancelled"}
log = logging.getLogger(__name__)


def trace_summary(messages: Sequence[Message], llm_calls: int | None = None) -> TraceSummary:
    """Count events, tool calls per tool, failed tool calls and model turns."""
    if isinstance(messages, PlainMessages):  # no tool calls: only the turns to count
        turns = llm_calls if llm_calls is not None else messages.assistant_turns()
        return TraceSummary(event_count=len(messages), llm_call_count=turns)
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
        llm_call_count=(
            llm_calls
            if llm_calls is not None
            else sum(1 for m in messages if m.role == "assistant")
        ),
    )


def priced(usage: TokenUsage | None, pricing: Pricing | None) -> float | None:
    """Cost in USD of `usage` at `pricing` (per million tokens); None when either is unknown."""
    if usage is None or pricing is None:
        return None
    cached_rate = pricing.cached_input if pricing.cached_input is not None else pricing.input
    return (
        usage.input * pricing.input + usage.cached * cached_rate + usage.output * pricing.output
    ) / 1_000_000


def _parse_output(run: AgentRun) -> ParsedOutput:
    if run.output_file_path:
        path = Path(run.output_file_path)
        if path.suffix != ".jsonl" and path.is_file():
            # pyarrow's JSON reader: loaded with the first session (see _from_stream).
            from evals_pipeline.enrichers.arrow_output import read_plain_output

            if (in_arrow := read_plain_output(path)) is not None:
                return in_arrow
        text = path.read_text(errors="replace")
        return parse_message_lines(text) if path.suffix == ".jsonl" else parse_output_document(text)
    if run.stdout_path and Path(run.stdout_path).exists():
        parsed = parse_output_document(Path(run.stdout_path).read_text(errors="replace"))
        parsed.warnings.append("no {OUTPUT_FILE} was written: stdout was taken as the answer")
        return parsed
    return ParsedOutput(messages=[])


def _read(path: str | None) -> str | None:
    return Path(path).read_text(errors="replace") if path and Path(path).is_file() else None


def parse_agent_stream(run: AgentRun) -> EnrichedSession:
    """The run's CLI stream (and rollout, for codex) in the canonical event model."""
    assert run.stream_kind is not None
    text = _read(run.stdout_path) or ""
    return parse_stream(run.stream_kind, text, rollout=_read(run.side_files.get("rollout")))


def read_agent_stream(run: AgentRun) -> ParsedStream:
    """`parse_agent_stream` without the models, the files read line by line (never whole), by
    the reader of the run's agent kind (agents/registry.py)."""
    assert run.stream_kind is not None
    with ExitStack() as files:
        stdout, rollout = (
            files.enter_context(Path(path).open(errors="replace"))
            if path and Path(path).is_file()
            else None
            for path in (run.stdout_path, run.side_files.get("rollout"))
        )
        return read_stream(run.stream_kind, stdout or "", rollout=rollout)


def run_cost(run: AgentRun) -> float | None:
    """The run's cost in USD as its session will report it, without writing anything (for
    the suite's budget while runs are still starting)."""
    if run.stream_kind:
        facts = read_agent_stream(run).session
        return (
            facts.cost_usd if facts.cost_usd is not None else priced(facts.token_usage, run.pricing)
        )
    return None if run.failed else _parse_output(run).cost_usd


@dataclass(frozen=True)
class Enriched:
    """A session just made, with the messages its Parquet file holds, for a grader in this
    process to take instead of reading them back; None when the file differs from them (a
    secret was scrubbed from it)."""

    session: Session
    messages: Sequence[Message] | None


def enrich_run(run: AgentRun, session_dir: Path) -> Session:
    """Enrich one run; the messages Parquet file is written even for a failed run.

    An agent CLI's stream is parsed even when the run failed, so a timed-out or erroring
    session keeps the transcript of what it did.
    """
    return enriched_run(run, session_dir).session


def enriched_run(run: AgentRun, session_dir: Path) -> Enriched:
    """`enrich_run`, keeping the session's messages (a grader in this process takes them)."""
    session_dir.mkdir(parents=True, exist_ok=True)
    with gc_paused():  # a long transcript's messages: many objects, all kept, none cyclic
        try:
            return _enrich(run, session_dir)
        except Exception as exc:
            # An output this enricher cannot take is its own case's error, with the reason,
            # never its step's: the other cases go on.
            log.warning(
                "the output of %s/%s could not be read", run.case_key, run.agent, exc_info=True
            )
            unreadable = f"its output could not be read: {type(exc).__name__}: {exc}"
            error = RecordError(
                stage="enrich",
                kind="parse",
                message=f"{run.error}; {unreadable}" if run.error else unreadable,
                stderr_tail=stderr_tail(run.stderr),
            )
            unread = run.model_copy(update={"error": error, "stream_kind": None})
            return _enrich(unread, session_dir)


def _enrich(run: AgentRun, session_dir: Path) -> Enriched:
    if run.stream_kind:
        return _from_stream(run, session_dir, read_agent_stream(run))
    parsed = ParsedOutput(messages=[]) if run.failed else _parse_output(run)
    return _session(
        run,
        session_dir,
        parsed.messages,
        answer=final_answer(parsed.messages),
        error=run.error,
        token_usage=parsed.token_usage,
        cost_usd=parsed.cost_usd,
        duration_ms=parsed.duration_ms,
        warnings=[*run.warnings, *parsed.warnings],
    )


def _from_stream(run: AgentRun, session_dir: Path, parsed: ParsedStream) -> Enriched:
    """The session of a parsed stream, its events and messages written straight to Parquet."""
    # The Parquet writers (pyarrow) load with the first session, not with `evals-pipeline run`,
    # whose agents start before they are needed.
    from evals_pipeline.enrichers.stream_tables import (
        StreamMessages,
        stream_trace_summary,
        write_stream_tables,
    )

    facts = parsed.session
    events_path, messages_path, as_stored = write_stream_tables(parsed, session_dir)
    cost = facts.cost_usd if facts.cost_usd is not None else priced(facts.token_usage, run.pricing)
    session = _record(
        run,
        session_dir,
        messages_path,
        message_count=len(parsed.messages),
        summary=stream_trace_summary(parsed.messages, facts.llm_call_count),
        answer=facts.final_answer,
        error=run.error or _stream_error(run, facts.error),
        token_usage=facts.token_usage,
        cost_usd=cost,
        duration_ms=facts.duration_ms,
        warnings=[*run.warnings, *facts.parse_warnings],
    ).model_copy(
        update={
            "agent_kind": facts.agent_kind,
            "session_id": facts.session_id,
            "model": facts.model or run.model,
            "events_path": str(events_path),
            "milestones": compute_milestones(parsed.events, milestone_origin(run, facts)),
            "system_prompt_injections": facts.system_prompt_injections,
            "retries": facts.retries,
        }
    )
    return Enriched(session, StreamMessages(parsed.messages) if as_stored else None)


def milestone_origin(run: AgentRun, enriched: EnrichedSession) -> int | None:
    """Where a session's milestone times count from: the agent process's start, the same origin
    for every CLI (a stream's own first timestamp comes later for some, e.g. claude's first tool
    result), when the stream was written during this run; else (a replayed or imported session,
    recorded at another time) the stream's own first timestamp, so times are never negative."""
    first = enriched.start_ms
    if first is None or run.start_ms <= first <= run.end_ms:
        return run.start_ms
    return first


def _stream_error(run: AgentRun, error: str | None) -> RecordError | None:
    """The error an agent CLI's stream reported (the model API's, even on exit 0)."""
    if error is None:
        return None
    return RecordError(
        stage="agent", kind="provider", message=error, stderr_tail=stderr_tail(run.stderr)
    )


def _session(
    run: AgentRun,
    session_dir: Path,
    messages: Sequence[Message],
    *,
    answer: str,
    error: RecordError | None,
    token_usage: TokenUsage | None,
    cost_usd: float | None,
    duration_ms: int | None,
    warnings: list[str],
) -> Enriched:
    from evals_pipeline.storage.messages import write_transcript  # pyarrow: see _from_stream

    messages_path = session_dir / "messages.parquet"
    as_stored = write_transcript(messages, messages_path)
    session = _record(
        run,
        session_dir,
        messages_path,
        message_count=len(messages),
        summary=trace_summary(messages),
        answer=answer,
        error=error,
        token_usage=token_usage,
        cost_usd=cost_usd,
        duration_ms=duration_ms,
        warnings=warnings,
    )
    return Enriched(session, messages if as_stored else None)


def _record(
    run: AgentRun,
    session_dir: Path,
    messages_path: Path,
    *,
    message_count: int,
    summary: TraceSummary,
    answer: str,
    error: RecordError | None,
    token_usage: TokenUsage | None,
    cost_usd: float | None,
    duration_ms: int | None,
    warnings: list[str],
) -> Session:
    """The session record of a run whose messages are written; a long answer goes to a file."""
    output_path = None
    if not fits_inline(answer):
        output_path = session_dir / "output.json"
        output_path.write_text(json.dumps(answer, ensure_ascii=False))
    return Session(
        case_key=run.case_key,
        agent=run.agent,
        trial=run.trial,
        status=(
            "setup_error"
            if run.setup_failed
            else "timed_out"
            if run.timed_out
            else "agent_error"
            if error
            else "ok"
        ),
        error=error,
        stderr=run.stderr,
        messages_path=str(messages_path),
        message_count=message_count,
        output=None if output_path else answer,
        output_path=str(output_path) if output_path else None,
        output_chars=len(answer),
        trace_summary=summary,
        token_usage=token_usage,
        cost_usd=cost_usd,
        duration_ms=duration_ms if duration_ms is not None else run.duration_ms,
        start_ms=run.start_ms,
        end_ms=run.end_ms,
        workspace_path=run.workspace_path,
        file_changes=run.file_changes,
        parse_warnings=warnings,
        turns=run.turns,
        agent_version=run.agent_version,
    )
