"""Tests without input, which AgentV skips: removed with a located warning, before validation.

AgentV 4.42.4's loader (yaml-parser.ts) logs "Skipping incomplete test" and runs nothing for a
test without input messages (shorthand-expansion.ts): here, a test whose `input` is missing,
null or an empty list (an input of the wrong type is a validation error). AgentV also skips a
test without an id (here an error, as in `agentv validate`) and one without criteria,
expected_output, assertions or turns of its own (here it runs with the suite's assertions, or
is reported ungradable: see docs/agentv-compatibility.md).
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
    if not notes:
        return [], []
    issues = [note for _, note in notes]
    if len(notes) == len(tests):
        return [], issues  # nothing left to run: say why, keep the tests for the other checks
    for index, _ in reversed(notes):
        del tests[index]
        doc.positions.remove_item((key,), index)
    return issues, []


def _missing(test: dict[str, Any]) -> str:
    """What makes AgentV skip the test and is a skip here ('' when nothing does)."""
    return "" if _has_input(test) else "input"


def _has_input(test: dict[str, Any]) -> bool:
    """Whether the test has an input AgentV can read. An input of the wrong shape is left to
    validation, which says what it must be."""
    value = test.get("input")
    return value is not None and value != []
