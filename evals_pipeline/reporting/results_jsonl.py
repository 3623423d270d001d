"""`results.jsonl`: one line per case x agent in the shape of AgentV's index.jsonl."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from evals_pipeline.models.grade import CaseGrade, GraderResult, Verdict

# AgentV knows pass / fail / skip; our grader `error` is its `skip` (an infrastructure failure).
AGENTV_VERDICTS: dict[Verdict, str] = {"pass": "pass", "fail": "fail", "error": "skip"}


def _grader_entry(result: GraderResult) -> dict[str, object]:
    return {
        "name": result.name,
        "type": result.type,
        "score": result.score if result.score is not None else 0.0,
        "weight": result.weight,
        "verdict": AGENTV_VERDICTS[result.verdict],
        "assertions": [a.model_dump(exclude_none=True) for a in result.assertions],
        "duration_ms": result.duration_ms,
        **({"error": result.error.message} if result.error else {}),
        **({"scores": [_grader_entry(child) for child in result.scores]} if result.scores else {}),
    }


def result_line(suite: str, grade: CaseGrade, created_ms: int) -> dict[str, object]:
    """AgentV's IndexArtifactEntry fields that existing tooling reads."""
    best = grade.best_trial()
    row: dict[str, object] = {
        "timestamp": datetime.fromtimestamp(created_ms / 1000, UTC).isoformat(),
        "test_id": grade.test_id,
        "suite": suite,
        "target": grade.agent,
        "score": grade.score,
        "scores": [_grader_entry(r) for r in best.graders],
        "execution_status": grade.execution_status,
        "token_usage": best.token_usage.model_dump() if best.token_usage else None,
        "cost_usd": best.cost_usd,
        "duration_ms": best.wall_ms,
    }
    if grade.error:
        row["error"] = grade.error.message
        row["failure_stage"] = grade.failure_stage
    if len(grade.trials) > 1:
        row["trials"] = [
            {"attempt": t.trial, "score": t.score, "verdict": t.verdict} for t in grade.trials
        ]
    return row


def render_results_jsonl(suite: str, grades: list[CaseGrade], created_ms: int) -> str:
    """One compact JSON line per grade, as AgentV's own JSON.stringify writes index.jsonl."""
    return b"".join(
        orjson.dumps(result_line(suite, g, created_ms), option=orjson.OPT_APPEND_NEWLINE)
        for g in grades
    ).decode()
