"""The report step's scope: the matrix's pairs and required tests as the definitions resolved
them, joined with the cases' records (a test added to the suite since, once its cases ran)."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.defs.report_scope import ReportScope
from evals_pipeline.suites import load_suite, resolve_cases


def suite_file(folder: Path, tests: list[str]) -> Path:
    lines = [
        "name: scope",
        "execution: {targets: [one, two]}",
        "targets:",
        "  - {name: one, provider: mock, response: hi}",
        "  - {name: two, provider: mock, response: hi}",
        "tests:",
    ]
    for test in tests:
        lines += [
            f"  - id: {test}",
            "    input: say hi",
            "    assertions: [{type: contains, value: hi}]",
        ]
        if test == "only-two":  # chooses its target: (only-two, one) is not in the matrix
            lines.append("    execution: {targets: [two]}")
        if test.startswith("must"):
            lines.append("    metadata: {required: true}")
    path = folder / "scope.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_expected_pairs_leave_out_what_a_test_does_not_target(tmp_path: Path) -> None:
    resolved = resolve_cases(load_suite(suite_file(tmp_path, ["both", "only-two", "must-a"])))
    scope = ReportScope.of(resolved)
    registered = {"both", "only-two", "must-a"}
    assert scope.expected([], registered, ["one", "two"]) == 5
    # Unregistered cases and agents the report does not cover are not expected.
    assert scope.expected([], {"both"}, ["one", "two"]) == 2
    assert scope.expected([], registered, ["two"]) == 3
    assert scope.required_tests([]) == {"must-a"}


def test_cases_added_since_the_definitions_loaded_count_once_they_ran(tmp_path: Path) -> None:
    scope = ReportScope.of(resolve_cases(load_suite(suite_file(tmp_path, ["both"]))))
    later = resolve_cases(load_suite(suite_file(tmp_path, ["both", "must-new"])))
    registered = {"both", "must-new"}
    assert scope.expected([], registered, ["one", "two"]) == 2
    assert scope.expected(later, registered, ["one", "two"]) == 4
    assert scope.required_tests(later) == {"must-new"}
