"""Tests AgentV skips as incomplete: removed with a located warning, before validation.

AgentV 4.42.4's loader (yaml-parser.ts) logs "Skipping incomplete test" and runs nothing for a
test without input messages (shorthand-expansion.ts) or without a grading spec of its own:
non-empty criteria (or `expected_outcome`), an expected_output message, an `assertions` or
`assert` key (even `[]`), or non-empty turns. Suite-level assertions do not make a test
complete, and neither do `evaluators` or `rubrics` alone. A `.jsonl` eval file (jsonl-parser.ts)
counts only criteria, expected_output and `assert`. Here the same tests are skipped, so that the
rows and scores are AgentV's. A test without an id is an error, as in `agentv validate`; an
input of the wrong type is left to validation, which says what it must be.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any

from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.yaml_positions import YamlDocument

GRADING_KEYS = ("criteria", "expected_output", "assertions", "turns")
# Keys a test may hold that are close to these but mean something else.
KNOWN_NEAR = {"input", "input_files", "assert", "expected_outcome", *GRADING_KEYS}
INPUT_FIX = "give the test an input: a string, or a list of {role, content} messages"
SPEC_FIX = (
    "give the test criteria: (what a good answer does), an expected_output, or assertions of "
    "its own; assertions: [] runs it with the suite's assertions only"
)
JSONL_SPEC_FIX = (
    "give the test criteria (what a good answer does) or an expected_output; in a .jsonl eval "
    "file AgentV counts a test's assertions only when they are spelled assert"
)


def drop_incomplete_tests(
    doc: YamlDocument, jsonl: bool = False
) -> tuple[list[SuiteIssue], list[SuiteIssue]]:
    """Remove from `doc.data` the tests AgentV skips: `(warnings, errors)`. When no test is
    left the notes are errors, as `agentv eval` then fails: a suite with nothing to run cannot
    be run. `jsonl`: the tests are a `.jsonl` eval file's rows, read by AgentV's JSONL rule."""
    data = doc.data
    if not isinstance(data, dict):
        return [], []
    # The list AgentV reads (resolveTests): `tests`, else a deprecated spelling.
    key = next((k for k in ("tests", "eval_cases", "evalcases") if k in data), "tests")
    tests = data.get(key)
    if not isinstance(tests, list):
        return [], []
    skipped: list[tuple[int, str, str]] = []  # (index, what is missing, fix)
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            continue  # validation says a test must be a mapping
        if not _has_input(test):
            skipped.append((index, "input", INPUT_FIX))
        elif _mistyped(test) or not (isinstance(test.get("id"), str) and test["id"]):
            continue  # validation says what is wrong, as `agentv validate` does
        elif jsonl and not _graded_in_jsonl(test):
            skipped.append((index, "criteria, expected_output or assert", JSONL_SPEC_FIX))
        elif not jsonl and not _graded(test):
            missing = "criteria, expected_output, assertions or turns of its own"
            execution = test.get("execution")
            legacy = "evaluators" in test or (
                isinstance(execution, dict) and "evaluators" in execution
            )
            fix = f"rename evaluators: to assertions:, or {SPEC_FIX}" if legacy else SPEC_FIX
            skipped.append((index, missing, fix))
    if not skipped:
        return [], []
    everything = len(skipped) == len(tests)
    issues = []
    for index, missing, fix in skipped:
        test = tests[index]
        fix = _near_miss(test, missing) or fix
        mark = doc.positions.key((key, index))
        name = test.get("id") if isinstance(test.get("id"), str) and test["id"] else None
        what = "skipped, as AgentV skips it" + ("; no test is left to run" if everything else "")
        issues.append(
            SuiteIssue(
                mark.file or doc.file,
                mark.line,
                mark.column,
                f"test {f'{name!r}' if name else f'tests[{index}]'} has no {missing}: {what}",
                fix,
            )
        )
    if everything:
        return [], issues  # nothing left to run: say why, keep the tests for the other checks
    for index, _, _ in reversed(skipped):
        del tests[index]
        doc.positions.remove_item((key,), index)
    return issues, []


def _near_miss(test: dict[str, Any], missing: str) -> str:
    """A fix naming a misspelt key of the test that would have made it run ('' when none):
    the unknown-key warning that says so is not shown when the load fails."""
    wanted = ["input"] if missing == "input" else list(GRADING_KEYS)
    for key in test:
        if key not in KNOWN_NEAR and (near := get_close_matches(key, wanted, n=1, cutoff=0.75)):
            return f"rename '{key}' to '{near[0]}'"
    return ""


def _graded(test: dict[str, Any]) -> bool:
    """AgentV's hasEvaluationSpec in yaml-parser.ts, on the test as written (`rubrics` and
    `evaluators` alone do not count there)."""
    if _criteria(test) or _expects(test):
        return True
    if "assertions" in test or "assert" in test:
        return True  # even [] or null: AgentV checks only that the key is there
    turns = test.get("turns")
    return isinstance(turns, list) and bool(turns)


def _graded_in_jsonl(test: dict[str, Any]) -> bool:
    """AgentV's hasEvaluationSpec in jsonl-parser.ts: no `assertions` or `turns` there."""
    return _criteria(test) or _expects(test) or "assert" in test


def _mistyped(test: dict[str, Any]) -> bool:
    """Whether input, criteria or expected_output is there with a value of the wrong type:
    AgentV skips such a test when run, but its validator refuses it, as validation does here."""
    kinds = {"input": str | list | dict | None, "criteria": str | None}
    kinds["expected_output"] = kinds["input"]
    return any(not isinstance(test.get(key), kind) for key, kind in kinds.items())


def _criteria(test: dict[str, Any]) -> bool:
    """Whether the test has non-empty criteria, or else a non-empty `expected_outcome`."""
    criteria = test.get("criteria")
    if not (isinstance(criteria, str) and criteria):
        criteria = test.get("expected_outcome")
    return isinstance(criteria, str) and bool(criteria)


def _expects(test: dict[str, Any]) -> bool:
    """Whether AgentV reads at least one expected message from the test's expected_output."""
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


def _has_input(test: dict[str, Any]) -> bool:
    """Whether the test has an input AgentV can read. An input of the wrong shape is left to
    validation, which says what it must be."""
    value = test.get("input")
    return value is not None and value != []
