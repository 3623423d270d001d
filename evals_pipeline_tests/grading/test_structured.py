"""is-json and field-accuracy."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.assertions.structured import parse_date
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import GraderResult
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


@pytest.mark.parametrize(
    ("output", "passed"),
    [
        ('{"a": 1}', True),
        ("  [1, 2]\n", True),
        ('"text"', True),
        ("{'a': 1}", False),
        ("NaN", False),
        ("", False),
        ('Here: {"a": 1}', False),
    ],
)
def test_is_json(
    make_case: CaseFactory, make_session: SessionFactory, output: str, passed: bool
) -> None:
    grade = only_grader(grade_trial(make_case([{"type": "is-json"}]), make_session(output=output)))
    assert grade.score == (1.0 if passed else 0.0)


EXPECTED = {
    "invoice": {"number": "INV-7", "total": 100.0, "date": "2025-01-15", "paid": True},
    "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}],
}


def _field_accuracy(
    make_case: CaseFactory,
    make_session: SessionFactory,
    output: Any,
    fields: list[dict[str, Any]],
    *,
    expected: Any = EXPECTED,
    **assertion: Any,
) -> GraderResult:
    fields = [{"match": "exact", **field} for field in fields]  # AgentV requires `match`
    case = make_case(
        [{"type": "field-accuracy", "fields": fields, **assertion}],
        expected_output=[{"role": "assistant", "content": expected}],
    )
    text = output if isinstance(output, str) else json.dumps(output)
    return only_grader(grade_trial(case, make_session(output=text)))


def test_exact_fields_with_paths_and_indexes(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    answer = json.loads(json.dumps(EXPECTED))
    answer["items"][1]["qty"] = 3
    grade = _field_accuracy(
        make_case,
        make_session,
        answer,
        [{"path": "invoice.number"}, {"path": "items[0].sku"}, {"path": "items[1].qty"}],
    )
    assert grade.score == pytest.approx(2 / 3)
    assert [a.passed for a in grade.assertions] == [True, True, False]
    assert grade.assertions[2].text == "items[1].qty"
    assert "got 3, expected 1" in (grade.assertions[2].evidence or "")


def test_exact_distinguishes_booleans_from_numbers(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    answer = {"invoice": {"paid": 1}}
    grade = _field_accuracy(make_case, make_session, answer, [{"path": "invoice.paid"}])
    assert grade.score == 0.0
    assert "type mismatch: got number" in (grade.assertions[0].evidence or "")


def test_weighted_average_and_all_or_nothing(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    answer = {"invoice": {"number": "INV-7", "total": 99.0}}
    fields = [{"path": "invoice.number", "weight": 3}, {"path": "invoice.total", "weight": 1}]
    weighted = _field_accuracy(make_case, make_session, answer, fields)
    assert weighted.score == pytest.approx(0.75)
    strict = _field_accuracy(make_case, make_session, answer, fields, aggregation="all_or_nothing")
    assert strict.score == 0.0


@pytest.mark.parametrize(
    ("got", "tolerance", "relative", "passed"),
    [
        (100.4, 0.5, False, True),
        (100.6, 0.5, False, False),
        ("100.4", 0.5, False, True),
        (104.0, 0.05, True, True),
        (106.0, 0.05, True, False),
        ("n/a", 1.0, False, False),
        (True, 1.0, False, False),
    ],
)
def test_numeric_tolerance(
    make_case: CaseFactory,
    make_session: SessionFactory,
    got: Any,
    tolerance: float,
    relative: bool,
    passed: bool,
) -> None:
    field = {
        "path": "invoice.total",
        "match": "numeric_tolerance",
        "tolerance": tolerance,
        "relative": relative,
    }
    grade = _field_accuracy(make_case, make_session, {"invoice": {"total": got}}, [field])
    assert grade.assertions[0].passed is passed


@pytest.mark.parametrize(
    ("got", "formats", "passed"),
    [
        ("2025-01-15T10:30:00Z", [], True),
        ("15-JAN-2025", [], True),
        ("01/15/2025", [], True),
        ("15/01/2025", [], True),
        ("2025-01-16", [], False),
        ("15.01.2025", ["DD.MM.YYYY"], True),
        ("January 15, 2025", ["%B %d, %Y"], True),
        ("someday", [], False),
    ],
)
def test_date_match(
    make_case: CaseFactory, make_session: SessionFactory, got: str, formats: list[str], passed: bool
) -> None:
    field = {"path": "invoice.date", "match": "date", "formats": formats}
    grade = _field_accuracy(make_case, make_session, {"invoice": {"date": got}}, [field])
    assert grade.assertions[0].passed is passed, grade.assertions[0]


def test_date_formats_disambiguate_day_and_month() -> None:
    assert parse_date("02/03/2025") == date(2025, 2, 3)
    assert parse_date("02/03/2025", ("DD/MM/YYYY",)) == date(2025, 3, 2)


def test_missing_fields(make_case: CaseFactory, make_session: SessionFactory) -> None:
    answer = {"invoice": {"number": "INV-7"}}
    fields: list[dict[str, Any]] = [
        {"path": "invoice.number"},
        {"path": "invoice.total"},  # required unless `required: false`, as in AgentV
        {"path": "invoice.date", "required": False},
        {"path": "not.expected"},
    ]
    grade = _field_accuracy(make_case, make_session, answer, fields)
    evidence = [a.evidence for a in grade.assertions]
    assert evidence[1:] == ["required field missing", "optional field missing", "no expected value"]
    # The optional missing field carries no weight: (1 + 0 + 1) / 3.
    assert grade.score == pytest.approx(2 / 3)


def test_answer_in_a_code_fence_and_expected_as_json_text(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    answer = 'Here it is:\n```json\n{"invoice": {"number": "INV-7"}}\n```'
    grade = _field_accuracy(
        make_case,
        make_session,
        answer,
        [{"path": "invoice.number"}],
        expected=json.dumps(EXPECTED),
    )
    assert grade.score == 1.0


def test_unparsable_answer_scores_zero(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    grade = _field_accuracy(make_case, make_session, "no json here", [{"path": "invoice.number"}])
    assert grade.score == 0.0
    assert grade.verdict == "fail"
    assert grade.assertions[0].text == "output parses as JSON"
    assert "no json here" in (grade.assertions[0].evidence or "")


def test_expected_output_without_json_is_a_grader_error(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    grade = _field_accuracy(
        make_case, make_session, {"a": 1}, [{"path": "a"}], expected="just prose"
    )
    assert grade.verdict == "error"
    assert grade.score is None
    assert "expected_output" in (message_of(grade.error) or "")
