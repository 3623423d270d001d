"""The report's Parquet tables: one row per case x agent, one per case x agent x grader, and for
judged runs one per trial dimension and one per pairwise judge reading (docs/storage.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

import pyarrow as pa

from evals_pipeline.models.errors import message_of
from evals_pipeline.models.events import MILESTONE_NAMES
from evals_pipeline.models.grade import CaseGrade, GraderResult
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.storage.parquet import arrow_table

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
        ("judge_cost_usd", pa.float64()),
        ("duration_ms", pa.int64()),
        ("llm_calls", pa.int32()),
        ("tool_calls_json", pa.string()),
        *((f"{name}_ms", pa.int64()) for name in MILESTONE_NAMES),
        ("warnings", pa.list_(pa.string())),
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
        ("parent", pa.string()),
    ]
)

DIMENSIONS_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("case_key", pa.string()),
        ("test_id", pa.string()),
        ("agent", pa.string()),
        ("trial", pa.int32()),
        ("dimension", pa.string()),
        ("heuristic_score", pa.float64()),
        ("panel_score", pa.float64()),
        ("panel_verdict", pa.string()),
        ("n_votes", pa.int32()),
        ("n_valid", pa.int32()),
        ("no_majority", pa.bool_()),
        ("weight_heuristic", pa.float64()),
        ("blended_score", pa.float64()),
        ("passed", pa.bool_()),
        ("llm_excluded", pa.bool_()),
        ("failure_primary", pa.string()),
        ("failure_tier", pa.string()),
    ]
)

PAIRWISE_SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("case_key", pa.string()),
        ("test_id", pa.string()),
        ("agent_a", pa.string()),
        ("agent_b", pa.string()),
        ("seed", pa.int64()),
        ("winner", pa.string()),
        ("dimension", pa.string()),
        ("verdict", pa.string()),
        ("bias_detected", pa.bool_()),
        ("judge", pa.string()),
        ("judge_model", pa.string()),
        ("r1", pa.string()),
        ("r2", pa.string()),
        ("w1", pa.string()),
        ("w2", pa.string()),
        ("consistent", pa.bool_()),
        ("position_following", pa.bool_()),
        ("vote", pa.string()),
    ]
)


def table_of_rows(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """`rows` as a table of `schema` without pandas (storage/parquet.py `arrow_table`); every row
    has every column (a KeyError names one that does not). Rows become columns by itemgetter and
    zip, in C: 50,000 dimension rows read cell by cell took ~1 s."""
    names = schema.names
    picked = map(itemgetter(*names), rows)
    columns = zip(*picked, strict=True) if rows else ([] for _ in names)
    return arrow_table(dict(zip(names, columns, strict=True)), schema)


_NO_MILESTONES: dict[str, int | None] = {f"{name}_ms": None for name in MILESTONE_NAMES}


def cases_table(
    suite: str,
    grades: list[CaseGrade],
    judge_costs: Mapping[tuple[str, str], float | None] | None = None,
) -> pa.Table:
    """One row per (case, agent): the case verdict and the usage of its best trial, and what its
    grading and judging cost over every trial (reporting/judge_usage.py `case_judge_costs`)."""
    judge_costs = judge_costs or {}
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
                "error": message_of(g.error),
                "threshold": g.threshold,
                "trials": len(g.trials),
                "input_tokens": usage.input if usage else None,
                "output_tokens": usage.output if usage else None,
                "cached_tokens": usage.cached if usage else None,
                "cost_usd": best.cost_usd,
                "judge_cost_usd": judge_costs.get((g.case_key, g.agent)),
                "duration_ms": best.wall_ms,
                "llm_calls": best.llm_calls,
                "tool_calls_json": json.dumps(best.tool_calls),
                **_NO_MILESTONES,
                **{f"{m.name}_ms": m.elapsed_ms for m in best.milestones},
                "warnings": g.warnings,
            }
        )
    return table_of_rows(rows, CASES_SCHEMA)


def graders_table(suite: str, grades: list[CaseGrade]) -> pa.Table:
    """One row per (case, agent, trial, grader) with the grader's assertions as JSON.

    A composite's members follow it, `parent` naming the composite (`outer/inner` when nested);
    top-level graders have no parent.
    """
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
            "error": message_of(r.error),
            "stderr": r.stderr,
            "assertions_json": json.dumps([a.model_dump() for a in r.assertions]),
            "duration_ms": r.duration_ms,
            "parent": parent,
        }
        for g in grades
        for t in g.trials
        for parent, r in _with_members(t.graders, None)
    ]
    return table_of_rows(rows, GRADERS_SCHEMA)


def _with_members(
    graders: list[GraderResult], parent: str | None
) -> Iterator[tuple[str | None, GraderResult]]:
    """Each grader, then its composite members (depth first), with the parent's name path."""
    for grader in graders:
        yield parent, grader
        path = grader.name if parent is None else f"{parent}/{grader.name}"
        yield from _with_members(grader.scores, path)


def dimensions_table(suite: str, judgments: Sequence[CaseJudgment]) -> pa.Table:
    """One row per (case, agent, trial, dimension) that was judged, with its failure class."""
    rows = [
        {
            "suite": suite,
            "case_key": j.case_key,
            "test_id": j.test_id,
            "agent": j.agent,
            "trial": t.trial,
            "dimension": d.dimension,
            "heuristic_score": d.heuristic_score,
            "panel_score": d.panel_score,
            "panel_verdict": d.panel_verdict,
            "n_votes": len(d.votes),
            "n_valid": d.n_valid,
            "no_majority": d.no_majority,
            "weight_heuristic": d.weight_heuristic,
            "blended_score": d.blended_score,
            "passed": d.passed,
            "llm_excluded": d.llm_excluded,
            "failure_primary": t.failure.primary if t.failure else None,
            "failure_tier": t.failure.tier if t.failure else None,
        }
        for j in judgments
        for t in j.trials
        for d in t.dimensions
    ]
    return table_of_rows(rows, DIMENSIONS_SCHEMA)


def pairwise_table(suite: str, pairwise: Sequence[CasePairwise]) -> pa.Table:
    """One row per (case, pair, dimension or `overall`, judge reading)."""
    rows = [
        {
            "suite": suite,
            "case_key": p.case_key,
            "test_id": p.test_id,
            "agent_a": p.agent_a,
            "agent_b": p.agent_b,
            "seed": p.seed,
            "winner": p.winner,
            "dimension": d.dimension,
            "verdict": d.verdict,
            "bias_detected": d.bias_detected,
            **r.model_dump(),
        }
        for case in pairwise
        for p in case.pairs
        for d in (p.overall, *p.per_dimension)
        for r in d.readings
    ]
    return table_of_rows(rows, PAIRWISE_SCHEMA)
