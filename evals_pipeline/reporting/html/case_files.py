"""The case pages' data: one small JavaScript file per (case, agent) under `<report>/cases/`.

The page loads a case's file on demand by adding a <script> tag (fetch() is blocked from
file://); the file hands its JSON to `window.__evalCase(key, data)`. Everything in it is trimmed
(transcript.py), so a run of 1,000 cases with 10 MB sessions stays a folder of small files.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import CaseGrade, GraderResult
from evals_pipeline.models.judging import CaseJudgment, Evidence, JudgeVerdict, TrialJudgment
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.html.transcript import (
    DIFF_LIMIT,
    TEXT_LIMIT,
    TOOL_LIMIT,
    milestone_events,
    transcript_json,
    trim,
)

CASES_DIR = "cases"
CALLBACK = "__evalCase"


class Spliced(str):
    """A value already encoded as JSON (a session's transcript, as its file's footer keeps it),
    written into the case file as it is: 3,000 transcripts of ~90 KB are neither decoded nor
    escaped again."""


def case_id(agent: str, case_key: str) -> str:
    """The key a case page is known by in the page and its file: `<agent>/<case_key>`."""
    return f"{agent}/{case_key}"


def case_file(agent: str, case_key: str) -> str:
    """The case file's path relative to the report folder (agents and case keys are slugs)."""
    return f"{CASES_DIR}/{agent}/{case_key}.js"


def _grader(result: GraderResult) -> dict[str, Any]:
    details = result.details or {}
    reasoning = details.get("reasoning") if isinstance(details.get("reasoning"), str) else None
    rest = {k: v for k, v in details.items() if k != "reasoning"}
    return {
        "name": result.name,
        "type": result.type,
        "verdict": result.verdict,
        "score": result.score,
        "weight": result.weight,
        "gate": result.gate,
        "hits": [
            {"text": a.text, "evidence": trim(a.evidence, TOOL_LIMIT)}
            for a in result.assertions
            if a.passed
        ],
        "misses": [
            {"text": a.text, "evidence": trim(a.evidence, TOOL_LIMIT)}
            for a in result.assertions
            if not a.passed
        ],
        "reasoning": trim(reasoning, TEXT_LIMIT) if reasoning else None,
        "details": trim(json.dumps(rest, indent=2, ensure_ascii=False), TEXT_LIMIT)
        if rest
        else None,
        "error": message_of(result.error),
        "stderr": trim(result.stderr, TOOL_LIMIT) if result.stderr else None,
        "duration_ms": result.duration_ms,
        "warnings": result.warnings,
        "members": [_grader(m) for m in result.scores],
    }


def _evidence(item: Evidence) -> dict[str, Any]:
    return {
        "quote": item.quote,
        "source": item.source,
        "claim": item.claim,
        "match": item.match,
        "grounded": item.match in ("EXACT", "FUZZY"),
        "reason": item.reason,
    }


def _vote(vote: JudgeVerdict) -> dict[str, Any]:
    return {
        "judge": vote.judge or vote.judge_model,
        "model": vote.judge_model,
        "verdict": vote.verdict,
        "confidence": vote.confidence,
        "valid": vote.valid,
        "critique": vote.critique,
        "evidence": [_evidence(e) for e in vote.evidence],
    }


def _judgment(trial: TrialJudgment) -> dict[str, Any]:
    failure = trial.failure
    return {
        "judged": trial.judged,
        "dimensions": [
            {
                "dimension": d.dimension,
                "panel_verdict": d.panel_verdict,
                "blended_score": d.blended_score,
                "heuristic_score": d.heuristic_score,
                "heuristic_reason": d.heuristic_reason,
                "passed": d.passed,
                "no_majority": d.no_majority,
                "errors": [e.message for e in d.errors],
                "votes": [_vote(v) for v in d.votes],
            }
            for d in trial.dimensions
        ],
        "failure": None
        if failure is None
        else {
            "primary": failure.primary,
            "tier": failure.tier,
            "rule_id": failure.rule_id,
            "secondary": list(failure.secondary),
            "evidence": [e[:TOOL_LIMIT] for e in failure.evidence],
            "confirmed": failure.check.confirmed if failure.check else None,
            "votes": [_vote(v) for v in failure.check.votes] if failure.check else [],
        },
    }


def _session(session: Session) -> dict[str, Any]:
    events = milestone_events(session.events_path, [m.seq for m in session.milestones])
    if session.workspace_path:
        # Paths inside the workspace read better relative to it.
        prefix = session.workspace_path.rstrip("/") + "/"
        events = {seq: line.replace(prefix, "") for seq, line in events.items()}
    return {
        "status": session.status,
        "error": message_of(session.error),
        "stderr": trim(session.stderr, TOOL_LIMIT) if session.stderr else None,
        "model": session.model,
        "agent_kind": session.agent_kind,
        "workspace_path": session.workspace_path,
        "events_path": session.events_path,
        "diff": trim(session.file_changes, DIFF_LIMIT) if session.file_changes else None,
        "milestones": [
            {"name": m.name, "elapsed_ms": m.elapsed_ms, "what": events.get(m.seq, "")}
            for m in session.milestones
        ],
        "transcript": Spliced(transcript_json(session.messages_path)),
    }


def _case(case: ResolvedCase) -> dict[str, Any]:
    return {
        "input": [{"role": m.role, "text": trim(m.text(), TEXT_LIMIT)} for m in case.input],
        "criteria": case.criteria,
        "expected_output": [
            {"role": m.role, "text": trim(m.text(), TEXT_LIMIT)} for m in case.expected_output
        ],
        "assertions": [
            {"name": a.display_name(), "type": a.kind, "required": a.required is not False}
            for a in case.assertions
        ],
        "threshold": case.threshold,
        "target": case.target.name,
    }


def case_detail(
    grade: CaseGrade | None,
    case: ResolvedCase | None,
    sessions: Sequence[Session],
    judgment: CaseJudgment | None,
) -> dict[str, Any]:
    """Everything the case page shows for one (case, agent), trimmed, as plain JSON data (each
    session's transcript as its JSON text: `Spliced`)."""
    by_trial = {s.trial: s for s in sessions}
    judged = {t.trial: t for t in judgment.trials} if judgment else {}
    trials = []
    numbers = sorted({*(t.trial for t in grade.trials), *by_trial} if grade else by_trial)
    grades = {t.trial: t for t in grade.trials} if grade else {}
    for number in numbers:
        graded = grades.get(number)
        session = by_trial.get(number)
        judged_trial = judged.get(number)
        usage = graded.token_usage if graded else None
        trials.append(
            {
                "trial": number,
                "verdict": graded.verdict if graded else None,
                "score": graded.score if graded else None,
                "error": message_of(graded.error) if graded else None,
                "failure_stage": graded.failure_stage if graded else None,
                "cost_usd": graded.cost_usd if graded else None,
                "tokens": usage.total if usage else None,
                "duration_ms": graded.wall_ms if graded else None,
                "graders": [_grader(g) for g in graded.graders] if graded else [],
                "session": _session(session) if session else None,
                "judgment": _judgment(judged_trial) if judged_trial else None,
            }
        )
    return {
        "case": _case(case) if case else None,
        "verdict": grade.verdict if grade else None,
        "score": grade.score if grade else None,
        "threshold": grade.threshold if grade else None,
        "execution_status": grade.execution_status if grade else None,
        "failure_stage": grade.failure_stage if grade else None,
        "error": message_of(grade.error) if grade else None,
        "reused": grade.reused.model_dump(mode="json") if grade and grade.reused else None,
        "warnings": grade.warnings if grade else [],
        "trials": trials,
    }


def write_case_file(folder: Path, agent: str, case_key: str, detail: dict[str, Any]) -> Path:
    """Write one case's detail as `cases/<agent>/<case_key>.js` under the report `folder`
    (its `cases/<agent>` folder made beforehand: once per agent, not once per case)."""
    path = folder / case_file(agent, case_key)
    spliced: list[str] = []
    trials = []
    nonce = uuid.uuid4().hex  # no text of the case holds it
    for trial in detail.get("trials", []):
        session = trial.get("session")
        if session is not None and isinstance(session.get("transcript"), Spliced):
            # A placeholder the encoder leaves as it is ("\u0000" escaped), replaced below.
            session = {**session, "transcript": f"\0{nonce} {len(spliced)}"}
            spliced.append(trial["session"]["transcript"])
        trials.append({**trial, "session": session})
    payload = json.dumps({**detail, "trials": trials}, ensure_ascii=False, separators=(",", ":"))
    for number, text in enumerate(spliced):
        payload = payload.replace(f'"\\u0000{nonce} {number}"', text, 1)
    key = json.dumps(case_id(agent, case_key))
    path.write_text(f"window.{CALLBACK}({key}, {payload});\n", encoding="utf-8")
    return path
