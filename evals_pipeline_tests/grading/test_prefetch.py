"""Transcript fields made one case ahead: taking a case starts the next one's on the prefetch
thread, and a grade made from a prepared context is the grade made without one."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.prefetch import TranscriptPrefetch
from evals_pipeline.models.messages import Message
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader

GRADER = """
import json, sys
payload = json.load(sys.stdin)
messages = payload.get("messages") or json.load(open(payload["messages_json_path"]))
print(json.dumps({"score": 1.0 if len(messages) == 1001 else 0.0}))  # the input, 1000 steps
"""


def test_taking_a_case_prepares_the_next_and_grades_match(
    tmp_path: Path, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    command = python_grader(tmp_path, "count.py", GRADER)
    count = {"name": "count", "type": "code-grader", "command": command, "messages_format": "json"}
    graded = make_case([count])
    long = [Message(role="assistant", content=f"step {i}: " + "x" * 100) for i in range(1000)]
    work = [
        (graded, [make_session(long), make_session(long, trial=1)]),
        (graded.model_copy(update={"test_id": "other"}), [make_session(long)]),
        (make_case([{"type": "contains", "value": "Hello"}]), [make_session()]),  # no code grader
        (graded, [make_session(long, status="agent_error", error="boom")]),  # not graded
    ]
    with TranscriptPrefetch(work, None, ahead=1) as ahead:
        first = ahead.take(0)
        assert sorted(first) == [0, 1]
        assert all(ctx.transcript_fields is not None for ctx in first.values())
        # The next case's were started when the first was taken, before anyone asks.
        upcoming = ahead._pending[1].result(timeout=60)
        assert upcoming[0].transcript_fields is not None
        assert ahead.take(1) is upcoming
        assert ahead.take(2) == {}
        assert ahead.take(3) == {}

    case, sessions = work[0]
    for session in sessions:
        prepared = grade_trial(case, session, session.trial, ctx=first[session.trial])
        fresh = grade_trial(case, session, session.trial)
        assert prepared.verdict == fresh.verdict == "pass"
        timing = {"duration_ms", "start_ms"}
        assert prepared.graders[0].model_dump(exclude=timing) == fresh.graders[0].model_dump(
            exclude=timing
        )
