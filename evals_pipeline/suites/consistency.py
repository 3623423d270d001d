"""Checks across a suite's parts: unique test keys, well-formed tool calls, gradable tests."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from evals_pipeline.models.messages import ToolCall
from evals_pipeline.models.suite import EvalSuite, MessageSpec
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.yaml_positions import YamlDocument


def duplicate_test_ids(doc: YamlDocument) -> list[SuiteIssue]:
    """Tests whose ids give the same partition key (`My Test` and `my-test` collide).

    Runs on the raw data, so it is reported together with any validation errors.
    """
    issues: list[SuiteIssue] = []
    tests = doc.data.get("tests") if isinstance(doc.data, dict) else None
    if not isinstance(tests, list):
        return issues
    seen: dict[str, tuple[str, int]] = {}
    for index, test in enumerate(tests):
        test_id = test.get("id") if isinstance(test, dict) else None
        if not isinstance(test_id, str) or not test_id:
            continue  # validation reports a missing or non-text id
        mark = doc.positions.value(("tests", index, "id"))
        try:
            key = slugify(test_id)
        except ValueError:
            issues.append(
                SuiteIssue(
                    doc.file,
                    mark.line,
                    mark.column,
                    f"test id {test_id!r} has no letters or digits to make a partition key from",
                    "use an id with letters or digits, e.g. id: my-test",
                )
            )
            continue
        if key in seen:
            first_id, first_line = seen[key]
            if first_id == test_id:
                message = (
                    f"duplicate test id '{test_id}' (line {mark.line}): "
                    f"already used at line {first_line}"
                )
            else:
                message = (
                    f"test id '{test_id}' (line {mark.line}) collides with '{first_id}' "
                    f"(line {first_line}): both become the partition key '{key}'"
                )
            issues.append(
                SuiteIssue(doc.file, mark.line, mark.column, message, "give each test a unique id")
            )
            continue
        seen[key] = (test_id, mark.line)
    return issues


def malformed_tool_calls(suite: EvalSuite, doc: YamlDocument) -> list[SuiteIssue]:
    """Expected tool calls must name their tool, or graders cannot compare them."""
    issues: list[SuiteIssue] = []
    for t_index, test in enumerate(suite.tests):
        for part in ("input", "expected_output"):
            spec: Any = getattr(test, part)
            if not isinstance(spec, list):
                continue
            for m_index, message in enumerate(spec):
                if not isinstance(message, MessageSpec):
                    continue
                for c_index, call in enumerate(message.tool_calls or []):
                    try:
                        ToolCall.model_validate(call)
                    except ValidationError:
                        path = ("tests", t_index, part, m_index, "tool_calls", c_index)
                        mark = doc.positions.value(path)
                        issues.append(
                            SuiteIssue(
                                doc.file,
                                mark.line,
                                mark.column,
                                "a tool call needs 'tool', the tool's name",
                                "write it as {tool: Bash, input: {command: pytest}}",
                            )
                        )
    return issues


def ungradable_tests(suite: EvalSuite, doc: YamlDocument) -> list[SuiteIssue]:
    """Warnings for tests with no assertion at all: nothing can give them a score."""
    warnings: list[SuiteIssue] = []
    for index, test in enumerate(suite.tests):
        skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
        if test.assertions or (suite.assertions and not skip):
            continue
        mark = doc.positions.key(("tests", index))
        criteria = (
            " (criteria alone needs an LLM grader, not supported yet)" if test.criteria else ""
        )
        warnings.append(
            SuiteIssue(
                doc.file,
                mark.line,
                mark.column,
                f"test '{test.id}' has no assertions{criteria}",
                "add an assertion, e.g. a contains check or a code-grader",
            )
        )
    return warnings
