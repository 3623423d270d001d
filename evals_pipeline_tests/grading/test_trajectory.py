"""tool-trajectory over tool calls read from the session's Parquet transcript."""

from __future__ import annotations

import os
from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.registry import evaluate
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.models.messages import Message, ToolCall
from evals_pipeline.models.session import Session
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def _transcript(*calls: tuple[str, dict[str, Any], int | None]) -> list[Message]:
    """An agent turn per tool call, then a final answer."""
    messages = [Message(role="user", content="Fix the bug.")]
    for i, (tool, args, duration) in enumerate(calls):
        call = ToolCall(tool=tool, input=args, id=f"t{i}", output="ok", duration_ms=duration)
        messages.append(Message(role="assistant", content=None, tool_calls=[call]))
    messages.append(Message(role="assistant", content="Fixed."))
    return messages


CALLS = (
    ("Read", {"path": "a.py"}, 20),
    ("Grep", {"pattern": "bug", "path": "."}, 50),
    ("Edit", {"path": "a.py", "patch": {"line": 3, "text": "x = 1"}}, 500),
    ("Bash", {"command": "pytest -q"}, None),
)


@pytest.fixture
def session(make_session: SessionFactory) -> Session:
    return make_session(_transcript(*CALLS))


def _grade(make_case: CaseFactory, session: Session, **assertion: Any) -> GraderResult:
    case = make_case([{"type": "tool-trajectory", **assertion}])
    return only_grader(grade_trial(case, session))


def test_any_order_minimums(make_case: CaseFactory, session: Session) -> None:
    grade = _grade(make_case, session, minimums={"Read": 1, "Edit": 1, "Write": 1, "Bash": 2})
    assert grade.score == pytest.approx(2 / 4)
    assert [a.passed for a in grade.assertions] == [True, True, False, False]
    assert grade.assertions[3].evidence == "called 1 times"
    assert grade.details == {"tool_calls": {"Read": 1, "Grep": 1, "Edit": 1, "Bash": 1}}


def test_in_order_subsequence(make_case: CaseFactory, session: Session) -> None:
    ok = _grade(make_case, session, mode="in_order", expected=[{"tool": "Read"}, {"tool": "Bash"}])
    assert ok.score == 1.0
    wrong = _grade(
        make_case, session, mode="in_order", expected=[{"tool": "Edit"}, {"tool": "Read"}]
    )
    assert wrong.score == 0.5
    assert wrong.assertions[1].evidence == "not found in the remaining calls"


def test_exact_sequence_and_length(make_case: CaseFactory, session: Session) -> None:
    tools = [{"tool": name} for name, _, _ in CALLS]
    assert _grade(make_case, session, mode="exact", expected=tools).score == 1.0
    shorter = _grade(make_case, session, mode="exact", expected=tools[:3])
    assert shorter.score == pytest.approx(3 / 4)
    assert shorter.assertions[0].text == "3 tool calls"
    swapped = _grade(make_case, session, mode="exact", expected=[tools[1], tools[0], *tools[2:]])
    assert swapped.score == 0.5


def test_subset_and_superset(make_case: CaseFactory, session: Session) -> None:
    allowed = [{"tool": "Read"}, {"tool": "Grep"}, {"tool": "Edit"}]
    subset = _grade(make_case, session, mode="subset", expected=allowed)
    assert subset.score == pytest.approx(3 / 4)
    assert not subset.assertions[3].passed
    superset = _grade(
        make_case, session, mode="superset", expected=[{"tool": "Edit"}, {"tool": "Write"}]
    )
    assert superset.score == 0.5


@pytest.mark.parametrize(
    ("args", "args_match", "passed"),
    [
        ({"path": "a.py"}, "exact", False),
        ({"path": "a.py"}, "superset", True),
        ({"path": "a.py", "patch": {"line": 3, "text": "x = 1"}, "extra": 1}, "subset", True),
        ({"path": "a.py", "patch": {"line": 4}}, "subset", False),
        ({"path": "b.py"}, "ignore", True),
        ({"path": "a.py", "patch": {"line": 3, "text": "other"}}, ["path", "patch.line"], True),
        ({"path": "a.py", "patch": {"line": 4}}, ["patch.line"], False),
        ({"path": "a.py", "patch": {"line": 3, "text": "x = 1"}}, "exact", True),
    ],
)
def test_args_matching(
    make_case: CaseFactory, session: Session, args: dict, args_match: Any, passed: bool
) -> None:
    grade = _grade(
        make_case,
        session,
        mode="superset",
        expected=[{"tool": "Edit", "args": args}],
        args_match=args_match,
    )
    assert grade.assertions[0].passed is passed


def test_per_step_args_match_and_any(make_case: CaseFactory, session: Session) -> None:
    expected = [
        {"tool": "Read", "args": "any"},
        {"tool": "Grep", "args": {"pattern": "bug"}, "args_match": "superset"},
    ]
    assert _grade(make_case, session, mode="in_order", expected=expected).score == 1.0


def test_step_latency(make_case: CaseFactory, session: Session) -> None:
    expected = [
        {"tool": "Read", "max_duration_ms": 100},
        {"tool": "Edit", "max_duration_ms": 100},
        {"tool": "Bash", "max_duration_ms": 100},
    ]
    grade = _grade(make_case, session, mode="in_order", expected=expected)
    # 3 steps found + 2 latency checks (Bash has no recorded duration, so it is not counted).
    assert [a.text for a in grade.assertions if "within" in a.text] == [
        "Read within 100 ms",
        "Edit within 100 ms",
    ]
    assert grade.score == pytest.approx(4 / 5)


def test_no_tool_calls(make_case: CaseFactory, make_session: SessionFactory) -> None:
    session = make_session(_transcript())
    assert _grade(make_case, session, minimums={"Read": 1}).score == 0.0
    assert _grade(make_case, session, mode="subset", expected=[{"tool": "Read"}]).score == 1.0


def test_transcript_is_read_once_per_trial(make_case: CaseFactory, session: Session) -> None:
    case = make_case(
        [
            {"type": "tool-trajectory", "minimums": {"Read": 1}},
            {"type": "tool-trajectory", "mode": "in_order", "expected": [{"tool": "Edit"}]},
        ]
    )
    ctx = GradingContext(case, session)
    first = evaluate(case.assertions[0], ctx)
    os.remove(session.messages_path)  # a second read would now fail
    second = evaluate(case.assertions[1], ctx)
    assert (first.score, second.score) == (1.0, 1.0)
