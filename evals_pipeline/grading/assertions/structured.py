"""Assertions on a structured (JSON) final answer: is-json and field-accuracy."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from typing import Any

from evals_pipeline.grading.assertions.json_values import (
    MISSING,
    json_equal,
    json_type,
    parse_json,
    parse_json_answer,
    resolve_path,
)
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation, preview
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import FieldAccuracyAssertion, FieldSpec, IsJsonAssertion
from evals_pipeline.models.grade import AssertionOutcome
from evals_pipeline.models.messages import Message, content_text

# AgentV's default date formats, most specific first; US before EU, so 01/02/2025 is January 2nd.
DEFAULT_DATE_FORMATS = (
    "YYYY-MM-DDTHH:mm:ssZ",
    "YYYY-MM-DDTHH:mm:ss",
    "YYYY-MM-DD",
    "DD-MMM-YYYY",
    "MM/DD/YYYY",
    "DD/MM/YYYY",
    "MM-DD-YYYY",
    "DD-MM-YYYY",
)
_DATE_TOKENS = re.compile(r"YYYY|MMMM|MMM|MM|DD|HH|mm|ss|Z")
_STRPTIME = {
    "YYYY": "%Y",
    "MMMM": "%B",
    "MMM": "%b",
    "MM": "%m",
    "DD": "%d",
    "HH": "%H",
    "mm": "%M",
    "ss": "%S",
    "Z": "%z",
}


@evaluator(IsJsonAssertion)
def evaluate_is_json(spec: IsJsonAssertion, ctx: GradingContext) -> Evaluation:
    """1 when the whole final answer parses as JSON."""
    try:
        value = parse_json(ctx.output)
    except ValueError as exc:
        return Evaluation.check(False, "output is JSON", f"{exc}; output {preview(ctx.output)}")
    return Evaluation.check(True, "output is JSON", f"parsed a JSON {json_type(value)}")


@evaluator(FieldAccuracyAssertion)
def evaluate_field_accuracy(spec: FieldAccuracyAssertion, ctx: GradingContext) -> Evaluation:
    """Compare fields of the answer's JSON with the expected output's, per field match rule."""
    expected = expected_json(ctx.case.expected_output)
    if expected is None:
        return Evaluation.failed(
            "field-accuracy needs expected_output whose last assistant message is a JSON object"
        )
    try:
        actual = parse_json_answer(ctx.output)
    except ValueError as exc:
        return Evaluation.check(
            False, "output parses as JSON", f"{exc}; output {preview(ctx.output)}"
        )
    results = [_field_result(field, actual, expected) for field in spec.fields]
    checks = [outcome for outcome, _, _ in results]
    if spec.aggregation == "all_or_nothing":
        score = 1.0 if all(c.passed for c in checks) else 0.0
    else:
        total = sum(weight for _, _, weight in results)
        score = sum(s * w for _, s, w in results) / total if total > 0 else 0.0
    return Evaluation(score=score, assertions=checks)


def expected_json(messages: list[Message]) -> Any:
    """The expected data: the last assistant message's object, or its text parsed as JSON."""
    for message in reversed(messages):
        if message.role != "assistant" or message.content in (None, "", []):
            continue
        if isinstance(message.content, dict):
            return message.content
        try:
            return parse_json_answer(content_text(message.content))
        except ValueError:
            continue
    return None


def _field_result(
    field: FieldSpec, actual: Any, expected: Any
) -> tuple[AssertionOutcome, float, float]:
    """One field's outcome, its score and the weight it carries in the average."""
    want = resolve_path(expected, field.path)
    got = resolve_path(actual, field.path)
    if want is MISSING:
        return _outcome(field.path, True, "no expected value"), 1.0, field.weight
    if got is MISSING:
        if field.required:
            return _outcome(field.path, False, "required field missing"), 0.0, field.weight
        # An optional field the answer left out neither helps nor hurts.
        return _outcome(field.path, True, "optional field missing"), 1.0, 0.0
    if field.match == "numeric_tolerance":
        passed, evidence = _numeric_match(field, got, want)
    elif field.match == "date":
        passed, evidence = _date_match(field, got, want)
    elif json_equal(got, want):
        passed, evidence = True, f"equals {_short(want)}"
    elif json_type(got) != json_type(want):
        passed = False
        evidence = f"type mismatch: got {json_type(got)} {_short(got)}, expected {json_type(want)}"
    else:
        passed, evidence = False, f"got {_short(got)}, expected {_short(want)}"
    return _outcome(field.path, passed, evidence), 1.0 if passed else 0.0, field.weight


def _outcome(path: str, passed: bool, evidence: str) -> AssertionOutcome:
    return AssertionOutcome(text=path, passed=passed, evidence=evidence)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else f"{text[:80]}…"


def _numeric_match(field: FieldSpec, got: Any, want: Any) -> tuple[bool, str]:
    got_n, want_n = _number(got), _number(want)
    if got_n is None or want_n is None:
        return False, f"non-numeric value: got {_short(got)}, expected {_short(want)}"
    diff = abs(got_n - want_n)
    # Relative to the expected magnitude; an expected 0 falls back to the absolute difference.
    measured = diff / abs(want_n) if field.relative and want_n != 0 else diff
    kind = "relative" if field.relative else "absolute"
    passed = measured <= field.tolerance
    verb = "within" if passed else "outside"
    return passed, f"{verb} tolerance: got {got_n}, expected {want_n}, {kind} diff {measured:.6g}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _date_match(field: FieldSpec, got: Any, want: Any) -> tuple[bool, str]:
    formats = tuple(field.formats) or DEFAULT_DATE_FORMATS
    got_d, want_d = parse_date(str(got), formats), parse_date(str(want), formats)
    if got_d is None:
        return False, f"unparseable date {_short(got)}"
    if want_d is None:
        return False, f"unparseable expected date {_short(want)}"
    return got_d == want_d, f"got {got_d.isoformat()}, expected {want_d.isoformat()}"


def parse_date(text: str, formats: tuple[str, ...] = DEFAULT_DATE_FORMATS) -> date | None:
    """The calendar day of `text`: ISO-8601 first, then each format (AgentV tokens or strptime)."""
    text = text.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    for fmt in formats:
        pattern = fmt if "%" in fmt else _DATE_TOKENS.sub(lambda m: _STRPTIME[m.group(0)], fmt)
        try:
            return datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    return None
