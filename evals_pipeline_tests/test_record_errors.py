"""A record's error is typed (models/errors.py): stage, kind, message and stderr tail. Records
stored before held the message alone; they still load, typed from what the record says, and
every surface shows the same text for them as before."""

from __future__ import annotations

import json

from evals_pipeline.models.errors import RecordError
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import DimensionJudgment
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.case_lines import failure_reason
from evals_pipeline.reporting.results_jsonl import result_line

# As `evals-pipeline run` stored them before RecordError: `error` a plain string.
OLD_RUN = """{"case_key": "t1", "agent": "codex", "trial": 0, "stdout_path": "/s/stdout.txt",
 "stderr": "Traceback (most recent call last):\\nOSError: disk full\\n", "exit_code": 3,
 "start_ms": 1000, "end_ms": 2500, "timed_out": false,
 "error": "exited with code 3: OSError: disk full", "setup_failed": false}"""
OLD_TIMED_OUT_RUN = """{"case_key": "t2", "agent": "codex", "start_ms": 0, "end_ms": 600000,
 "timed_out": true, "exit_code": null, "error": "timed out after 600 s"}"""
OLD_SESSION = """{"case_key": "t3", "agent": "codex", "status": "setup_error",
 "error": "workspace setup failed: clone refused", "stderr": "",
 "messages_path": "/s/messages.parquet"}"""
OLD_GRADE = """{"case_key": "t4", "test_id": "t4", "agent": "codex", "threshold": 0.8, "score": 0.0,
 "verdict": "error", "execution_status": "execution_error", "failure_stage": "grader",
 "error": "grader 'check' failed: the grader produced no score\\nmore",
 "trials": [{"trial": 0, "score": 0.0, "verdict": "error",
   "execution_status": "execution_error", "failure_stage": "grader",
   "error": "grader 'check' failed: the grader produced no score\\nmore",
   "graders": [{"name": "check", "type": "code-grader", "score": null, "verdict": "error",
     "error": "the grader produced no score", "stderr": "warning: slow\\n"}]}]}"""


def test_an_old_agent_run_loads_with_its_error_typed_by_what_it_says() -> None:
    run = AgentRun.model_validate_json(OLD_RUN)
    assert run.error == RecordError(
        stage="agent",
        kind="exit_code",
        message="exited with code 3: OSError: disk full",
        stderr_tail="Traceback (most recent call last):\nOSError: disk full\n",
    )
    assert run.failed and str(run.error) == "exited with code 3: OSError: disk full"
    timed_out = AgentRun.model_validate_json(OLD_TIMED_OUT_RUN)
    assert timed_out.error is not None
    assert (timed_out.error.stage, timed_out.error.kind) == ("agent", "timeout")


def test_an_old_session_loads_with_its_error_typed_by_its_status() -> None:
    session = Session.model_validate_json(OLD_SESSION)
    assert session.error == RecordError(
        stage="setup", kind="setup", message="workspace setup failed: clone refused"
    )


def test_an_old_grade_loads_and_shows_the_same_text_as_before() -> None:
    grade = CaseGrade.model_validate_json(OLD_GRADE)
    assert grade.error is not None
    assert (grade.error.stage, grade.error.kind) == ("grade", "failed")
    grader = grade.trials[0].graders[0]
    assert grader.error == RecordError(
        stage="grade",
        kind="no_score",
        message="the grader produced no score",
        stderr_tail="warning: slow\n",
    )
    # The surfaces read the message: the CLI's line and results.jsonl say what they said.
    assert failure_reason(grade) == (
        "error in grader: grader 'check' failed: the grader produced no score"
    )
    line = result_line("suite", grade, created_ms=0)
    assert line["error"] == "grader 'check' failed: the grader produced no score\nmore"
    assert line["scores"][0]["error"] == "the grader produced no score"  # type: ignore[index]


def test_a_typed_error_is_stored_whole_and_read_back_the_same() -> None:
    grade = CaseGrade.model_validate_json(OLD_GRADE)
    stored = json.loads(grade.model_dump_json())
    assert stored["error"] == {
        "stage": "grade",
        "kind": "failed",
        "message": "grader 'check' failed: the grader produced no score\nmore",
        "stderr_tail": "",
    }
    assert CaseGrade.model_validate(stored) == grade


def test_old_judge_errors_load_typed() -> None:
    judged = DimensionJudgment.model_validate(
        {"dimension": "correctness", "errors": ["judge-a: HTTP 500"], "weight_heuristic": 0.5}
    )
    assert judged.errors == (
        RecordError(stage="judge", kind="failed", message="judge-a: HTTP 500"),
    )
