"""What each case x agent partition shows in the Dagster UI: its run's, session's or grade's figures
as materialization metadata, set per partition from the batched step (docs/dagster-ui.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import dagster as dg

from evals_pipeline.defs.partitions import partition_key
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.case_lines import failure_reason

R = TypeVar("R", AgentRun, Session, CaseGrade)
Metadata = dict[str, Any]


def first_line(text: str | None, limit: int = 300) -> str:
    """An error in a line: its first non-blank line, cut to `limit` characters."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return (lines[0] if lines else "unknown")[:limit]


def _seconds(ms: Sequence[int | None]) -> float | None:
    known = [m for m in ms if m is not None]
    return round(sum(known) / 1000, 3) if known else None


def _sum(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _figures(**values: Any) -> Metadata:
    """Metadata without the figures nobody measured (None)."""
    return {key: value for key, value in values.items() if value is not None}


def _reuse(marks: Sequence[Reuse | None]) -> Metadata:
    """`reused` (whether the result store served it) and, when it did, the run it came from."""
    if not marks or any(m is None for m in marks):
        return {"reused": False}
    first = min((m for m in marks if m is not None), key=lambda m: m.stored_ms)
    return {"reused": True, "reused_from_run": first.run_id, "stored_ms": first.stored_ms}


def run_metadata(runs: Sequence[AgentRun]) -> Metadata:
    """One partition's agent runs (one per trial): duration, exit code, timeouts, the error, or
    why it was not run."""
    errors = [r.error.message for r in runs if r.error]
    not_run = [r.not_run for r in runs if r.not_run]
    last = runs[-1]
    return _figures(
        duration_s=_seconds([r.duration_ms for r in runs]),
        exit_code=last.exit_code,
        timed_out=any(r.timed_out for r in runs),
        error=first_line(errors[0]) if errors else None,
        agent_version=last.agent_version,
        auth=last.auth,
        **_reuse([r.reused for r in runs]),
        not_run=not_run[0] if not_run else None,
    )


def session_metadata(sessions: Sequence[Session]) -> Metadata:
    """One partition's sessions: status, tokens, cost, duration, messages and tool calls."""
    usages = [s.token_usage for s in sessions if s.token_usage is not None]
    errors = [s.error.message for s in sessions if s.error]
    statuses = {s.status for s in sessions}
    return _figures(
        status=", ".join(sorted(statuses)),
        tokens=sum(u.total for u in usages) if usages else None,
        cost_usd=_sum([s.cost_usd for s in sessions]),
        duration_s=_seconds([s.duration_ms for s in sessions]),
        messages=sum(s.message_count for s in sessions),
        tool_calls=sum(sum(s.trace_summary.tool_calls.values()) for s in sessions),
        error=first_line(errors[0]) if errors else None,
    )


def grade_metadata(grade: CaseGrade) -> Metadata:
    """One partition's grade: verdict, score against its threshold, cost, tokens and duration
    over its trials, and why it did not pass when it did not."""
    usages = [t.token_usage for t in grade.trials if t.token_usage is not None]
    return _figures(
        verdict=grade.verdict,
        score=float(grade.score),
        threshold=float(grade.threshold),
        cost_usd=_sum([t.cost_usd for t in grade.trials]),
        tokens=sum(u.total for u in usages) if usages else None,
        duration_s=_seconds([t.wall_ms for t in grade.trials]),
        trials=len(grade.trials) if len(grade.trials) > 1 else None,
        reason=failure_reason(grade) if grade.verdict != "pass" else None,
        error=first_line(message_of(grade.error)) if grade.verdict == "error" else None,
        **_reuse([grade.reused]),
    )


def add_partition_metadata(
    context: dg.AssetExecutionContext,
    records: Sequence[R],
    describe: Callable[[list[R]], Metadata],
    asset_key: dg.AssetKey | None = None,
) -> None:
    """Attach `describe(records of the partition)` to each partition's materialization of
    `asset_key` (default: the step's one asset), with the partition's own row count (the IO
    manager's is the whole step's)."""
    by_key: dict[str, list[R]] = defaultdict(list)
    for record in records:
        by_key[str(partition_key(record.case_key, record.agent))].append(record)
    targeted = set(context.partition_keys)
    if stray := sorted(set(by_key) - targeted):
        raise dg.DagsterInvariantViolationError(f"partitions not in this step: {stray[:5]}")
    # context.add_asset_metadata re-lists the step's whole partition range on every call (a
    # database read), which makes a batched step quadratic in its partitions; the keys are
    # checked once above, so each partition's metadata goes straight to the step's accumulator.
    step = context.op_execution_context._step_execution_context
    for key, group in by_key.items():
        metadata = {**describe(group), "dagster/row_count": len(group)}
        step._metadata_accumulator = step._metadata_accumulator.with_additional_asset_metadata(
            asset_key=asset_key or context.asset_key, metadata=metadata, partition_key=key
        )
