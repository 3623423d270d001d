"""Text assertions on the final answer, through grade_trial as the pipeline runs them."""

from __future__ import annotations

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.assertions.text import compile_js_regex
from evals_pipeline.models.errors import message_of
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader

ANSWER = "  The Answer is 42.\nDone.  "


@pytest.mark.parametrize(
    ("assertion", "passed"),
    [
        ({"type": "contains", "value": "Answer is 42"}, True),
        ({"type": "contains", "value": "answer is 42"}, False),
        ({"type": "icontains", "value": "ANSWER IS 42"}, True),
        ({"type": "icontains", "value": "forty-two"}, False),
        ({"type": "equals", "value": "The Answer is 42.\nDone."}, True),
        ({"type": "equals", "value": " The Answer is 42.\nDone. \n"}, True),
        ({"type": "equals", "value": "The Answer is 42."}, False),
        ({"type": "starts-with", "value": "  The Answer"}, True),
        ({"type": "starts-with", "value": "Answer"}, False),
        ({"type": "ends-with", "value": "Done.  "}, True),
        ({"type": "ends-with", "value": "42."}, False),
        ({"type": "contains-any", "value": ["nope", "42"]}, True),
        ({"type": "contains-any", "value": ["nope", "never"]}, False),
        ({"type": "contains-all", "value": ["Answer", "42"]}, True),
        ({"type": "contains-all", "value": ["Answer", "43"]}, False),
        ({"type": "icontains-any", "value": ["DONE", "x"]}, True),
        ({"type": "icontains-all", "value": ["the answer", "DONE"]}, True),
        ({"type": "icontains-all", "value": ["the answer", "missing"]}, False),
        ({"type": "regex", "value": r"\d+"}, True),
        ({"type": "regex", "value": r"^done\.$"}, False),
        ({"type": "regex", "value": r"^done\.\s*$", "flags": "im"}, True),
        ({"type": "regex", "value": r"42\..Done", "flags": "s"}, True),
        ({"type": "regex", "value": r"42\..Done"}, False),
        ({"type": "regex", "value": r"(?<n>\d)\k<n>", "flags": "gu"}, False),
        ({"type": "regex", "value": r"(?<n>4)(?<m>2)"}, True),
        ({"type": "regex", "value": r"(?<=is )\d+"}, True),
    ],
)
def test_text_assertions(
    make_case: CaseFactory, make_session: SessionFactory, assertion: dict, passed: bool
) -> None:
    grade = only_grader(grade_trial(make_case([assertion]), make_session(output=ANSWER)))
    assert grade.score == (1.0 if passed else 0.0)
    assert grade.verdict == ("pass" if passed else "fail")
    assert grade.assertions[0].passed is passed
    assert grade.assertions[0].evidence


def test_failed_contains_shows_what_the_output_was(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    grade = only_grader(
        grade_trial(make_case([{"type": "contains", "value": "xyz"}]), make_session(output=ANSWER))
    )
    assert grade.name == "contains-xyz"
    assert grade.type == "contains"
    assert "The Answer is 42" in (grade.assertions[0].evidence or "")


def test_contains_all_evidence_names_the_missing_values(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "contains-all", "value": ["Answer", "43"]}])
    grade = only_grader(grade_trial(case, make_session(output=ANSWER)))
    assert "missing ['43']" in (grade.assertions[0].evidence or "")


def test_invalid_regex_flag_is_a_grader_error(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    trial = grade_trial(make_case([{"type": "regex", "value": "a", "flags": "x"}]), make_session())
    assert trial.verdict == "error"
    assert only_grader(trial).verdict == "error"
    assert "invalid regex flag 'x'" in (message_of(only_grader(trial).error) or "")


def test_js_regex_translation() -> None:
    assert compile_js_regex(r"(?<year>\d{4})-\k<year>").search("2024-2024")
    assert compile_js_regex("HELLO", "i").search("hello")
    assert compile_js_regex(r"(?<!a)b").search("cb")


def test_output_comes_from_the_transcript_when_the_session_has_none(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "contains", "value": "world"}])
    assert only_grader(grade_trial(case, make_session(output=None))).verdict == "pass"
