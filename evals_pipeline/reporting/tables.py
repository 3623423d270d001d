"""The report's Parquet tables: one row per case x agent, one per case x agent x grader."""

from __future__ import annotations

import json

import pyarrow as pa

from evals_pipeline.models.events import MILESTONE_NAMES
from evals_pipeline.models.grade import CaseGrade

CASES_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("case_key", pa.string()),
        ("test_id", pa.string()),
        ("agent", pa.string()),
        ("score", pa.float64()),
        ("verdict", pa.string()),
        ("execution_status", pa.string()),
        ("failure_stage", pa.string()),
        ("error", pa.string()),
        ("threshold", pa.float64()),
        ("trials", pa.int32()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("cached_tokens", pa.int64()),
        ("cost_usd", pa.float64()),
        ("duration_ms", pa.int64()),
        ("llm_calls", pa.int32()),
        ("tool_calls_json", pa.string()),
        *((f"{name}_ms", pa.int64()) for name in MILESTONE_NAMES),
    ]
)

GRADERS_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("case_key", pa.string()),
        ("test_id", pa.string()),
        ("agent", pa.string()),
        ("trial", pa.int32()),
        ("grader", pa.string()),
        ("type", pa.string()),
        ("score", pa.float64()),
        ("verdict", pa.string()),
        ("weight", pa.float64()),
        ("error", pa.string()),
        ("stderr", pa.string()),
        ("assertions_json", pa.string()),
        ("duration_ms", pa.int64()),
    ]
)


def cases_table(suite: str, grades: list[CaseGrade]) -> pa.Table:
    """One row per (case, agent): the case verdict and the usage of its best trial."""
    rows = []
    for g in grades:
        best = g.best_trial()
        usage = best.token_usage
        rows.append(
            {
                "suite": suite,
                "case_key": g.case_key,
                "test_id": g.test_id,
                "agent": g.agent,
                "score": g.score,
                "verdict": g.verdict,
                "execution_status": g.execution_status,
                "failure_stage": g.failure_stage,
                "error": g.error,
                "threshold": g.threshold,
                "trials": len(g.trials),
                "input_tokens": usage.input if usage else None,
                "output_tokens": usage.output if usage else None,
                "cached_tokens": usage.cached if usage else None,
                "cost_usd": best.cost_usd,
                "duration_ms": best.duration_ms,
                "llm_calls": best.llm_calls,
                "tool_calls_json": json.dumps(best.tool_calls),
                **{f"{m.name}_ms": m.elapsed_ms for m in best.milestones},
            }
        )
    return pa.Table.from_pylist(rows, schema=CASES_SCHEMA)


def graders_table(suite: str, grades: list[CaseGrade]) -> pa.Table:
    """One row per (case, agent, trial, grader) with the grader's assertions as JSON."""
    rows = [
        {
            "suite": suite,
            "case_key": g.case_key,
            "test_id": g.test_id,
            "agent": g.agent,
            "trial": t.trial,
            "grader": r.name,
            "type": r.type,
            "score": r.score,
            "verdict": r.verdict,
            "weight": r.weight,
            "error": r.error,
            "stderr": r.stderr,
            "assertions_json": json.dumps([a.model_dump() for a in r.assertions]),
            "duration_ms": r.duration_ms,
        }
        for g in grades
        for t in g.trials
        for r in t.graders
    ]
    return pa.Table.from_pylist(rows, schema=GRADERS_SCHEMA)
