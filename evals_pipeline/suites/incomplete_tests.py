"""Tests without input, which AgentV skips: removed with a located warning, before validation.

AgentV 4.42.4's loader (yaml-parser.ts) logs "Skipping incomplete test" and runs nothing for a
test without input messages (shorthand-expansion.ts): here, a test whose `input` is missing,
null or an empty list (an input of the wrong type is a validation error). AgentV also skips a
test without an id (here an error, as in `agentv validate`) and one without criteria,
expected_output, assertions or turns of its own: here it runs with the suite's assertions, with
a warning saying AgentV skips it (or is reported ungradable when nothing grades it).
"""

from __future__ import annotations

from typing import Any

from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.yaml_positions import YamlDocument

SKIP_FIX = "give the test an input: a string, or a list of {role, content} messages"


def drop_incomplete_tests(doc: YamlDocument) -> tuple[list[SuiteIssue], list[SuiteIssue]]:
    """Remove from `doc.data` the tests AgentV skips: `(warnings, errors)`. When no test is
    left the notes are errors: a suite with nothing to run cannot be run."""
    data = doc.data
    if not isinstance(data, dict):
        return [], []
    # The list AgentV reads (resolveTests): `tests`, else a deprecated spelling.
    key = next((k for k in ("tests", "eval_cases", "evalcases") if k in data), "tests")
    tests = data.get(key)
    if not isinstance(tests, list):
        return [], []
    notes: list[tuple[int, SuiteIssue]] = []
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            continue  # validation says a test must be a mapping
        missing = _missing(test)
        if missing:
            mark = doc.positions.key((key, index))
            name = test.get("id") if isinstance(test.get("id"), str) and test["id"] else None
            notes.append(
                (
                    index,
                    SuiteIssue(
                        mark.file or doc.file,
                        mark.line,
                        mark.column,
                        f"test {f'{name!r}' if name else f'tests[{index}]'} has no {missing}: "
                        "skipped, as AgentV skips it",
                        SKIP_FIX,
                    ),
                )
            )
    differences = _graded_by_the_suite_only(doc, key, tests, {i for i, _ in notes})
    if not notes:
        return differences, []
    issues = [note for _, note in notes]
    if len(notes) == len(tests):
        return [], issues  # nothing left to run: say why, keep the tests for the other checks
    for index, _ in reversed(notes):
        del tests[index]
        doc.positions.remove_item((key,), index)
    return sorted(issues + differences, key=lambda w: (w.file, w.line, w.column)), []


def _graded_by_the_suite_only(
    doc: YamlDocument, key: str, tests: list[Any], skipped: set[int]
) -> list[SuiteIssue]:
    """Warnings for the tests AgentV skips that run here: graded only by the suite's
    assertions, with no criteria, expected_output, assertions or turns of their own. (Without
    suite assertions either, the ungradable-test warning says it.)"""
    data = doc.data
    execution = data.get("execution")
    suite_graded = any(k in data for k in ("assertions", "assert")) or (
        isinstance(execution, dict) and any(k in execution for k in ("assertions", "evaluators"))
    )
    if not suite_graded:
        return []
    warnings = []
    for index, test in enumerate(tests):
        if index in skipped or not isinstance(test, dict) or _graded(test):
            continue
        mark = doc.positions.key((key, index))
        warnings.append(
            SuiteIssue(
                mark.file or doc.file,
                mark.line,
                mark.column,
                f"test {test.get('id')!r} has no criteria, expected_output, assertions or turns "
                "of its own: AgentV 4.42.4 skips it; evals-pipeline runs it with the suite's "
                "assertions",
                "add criteria: (or its own assertions) so that AgentV runs it too",
            )
        )
    return warnings


def _graded(test: dict[str, Any]) -> bool:
    """AgentV's hasEvaluationSpec, on the test as written (`rubrics` and `evaluators` alone do
    not count there)."""
    criteria = test.get("criteria")
    if not (isinstance(criteria, str) and criteria):
        criteria = test.get("expected_outcome")
    if isinstance(criteria, str) and criteria:
        return True
    if "assertions" in test or "assert" in test:
        return True
    turns = test.get("turns")
    if isinstance(turns, list) and turns:
        return True
    expected = test.get("expected_output")
    if isinstance(expected, list) and expected and isinstance(expected[0], dict):
        # A list of messages counts only when one of them is a message AgentV reads.
        return "role" not in expected[0] or any(_is_message(m) for m in expected)
    if isinstance(expected, dict) and "role" in expected:
        return _is_message(expected)
    return isinstance(expected, str | list | dict)


def _is_message(value: Any) -> bool:
    """AgentV's isTestMessage: a known role, with content or tool calls."""
    if not isinstance(value, dict) or value.get("role") not in (
        "system",
        "user",
        "assistant",
        "tool",
    ):
        return False
    content = value.get("content")
    if isinstance(content, str | dict):
        return True
    if isinstance(content, list) and all(isinstance(item, str | dict) for item in content):
        return True
    calls = value.get("tool_calls")
    return isinstance(calls, list) and bool(calls)


def _missing(test: dict[str, Any]) -> str:
    """What makes AgentV skip the test and is a skip here ('' when nothing does)."""
    return "" if _has_input(test) else "input"


def _has_input(test: dict[str, Any]) -> bool:
    """Whether the test has an input AgentV can read. An input of the wrong shape is left to
    validation, which says what it must be."""
    value = test.get("input")
    return value is not None and value != []
