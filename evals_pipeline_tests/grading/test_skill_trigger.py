"""skill-trigger: canonical Skill calls, Read of a skill file, or a result naming one."""

from __future__ import annotations

from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.models.messages import Message, ToolCall
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def _grade(
    make_case: CaseFactory, make_session: SessionFactory, calls: list[ToolCall], **spec: Any
) -> GraderResult:
    messages = [
        Message(role="user", content="Make a PDF."),
        Message(role="assistant", content=None, tool_calls=calls),
        Message(role="assistant", content="Done."),
    ]
    case = make_case([{"type": "skill-trigger", "skill": "pdf", **spec}])
    return only_grader(grade_trial(case, make_session(messages)))


@pytest.mark.parametrize(
    ("call", "evidence"),
    [
        (
            ToolCall(tool="Skill", input={"skill": "anthropic:pdf"}),
            'Skill tool invoked with skill="anthropic:pdf"',
        ),
        (
            ToolCall(tool="read", input={"path": "/x/skills/pdf/SKILL.md"}),
            "Read tool loaded skill file: /x/skills/pdf/SKILL.md",
        ),
        (
            ToolCall(tool="Bash", input={"command": "ls"}, output="skills/pdf/SKILL.md"),
            'Tool "Bash" output referenced skill file for "pdf"',
        ),
    ],
)
def test_each_way_a_skill_is_used(
    make_case: CaseFactory, make_session: SessionFactory, call: ToolCall, evidence: str
) -> None:
    grade = _grade(make_case, make_session, [call])
    assert (grade.name, grade.score, grade.assertions[0].text) == (
        "skill-trigger-pdf",
        1.0,
        evidence,
    )


def test_not_triggered(make_case: CaseFactory, make_session: SessionFactory) -> None:
    calls = [ToolCall(tool="Read", input={"file_path": "docs/pdf.md"})]
    missed = _grade(make_case, make_session, calls)
    assert (missed.score, missed.assertions[0].text) == (
        0.0,
        'Skill "pdf" not found in 1 tool call(s)',
    )
    assert _grade(make_case, make_session, []).assertions[0].text == "No tool calls recorded"
    avoided = _grade(make_case, make_session, calls, should_trigger=False)
    assert (avoided.score, avoided.assertions[0].text) == (
        1.0,
        'Skill "pdf" correctly did not trigger',
    )


def test_should_not_trigger_but_did(make_case: CaseFactory, make_session: SessionFactory) -> None:
    calls = [ToolCall(tool="Skill", input={"skill": "pdf"})]
    grade = _grade(make_case, make_session, calls, should_trigger=False)
    assert (grade.score, grade.verdict) == (0.0, "fail")
