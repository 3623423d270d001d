"""Values of the wrong type or shape, and missing required keys, name what was expected."""

from __future__ import annotations

from evals_pipeline_tests.suites.conftest import Project, at_line, only


def test_wrong_type_names_the_expected_type(project: Project) -> None:
    issues = project.issues(
        "s.eval.yaml",
        """\
        execution:
          workers: "three"
        tests:
          - id: a
            input: hi
            assertions:
              - type: contains
                value: hi
                weight: -1
        """,
    )
    workers = at_line(issues, 2)
    assert workers.message == "execution.workers must be a whole number, got the string 'three'"
    assert workers.fix == "write a whole number, e.g. workers: 3"
    weight = at_line(issues, 9)
    assert weight.message == (
        "tests[0].assertions[0].weight must be a number greater than or equal to 0, "
        "got the number -1"
    )
    assert weight.fix == "set weight to a number greater than or equal to 0"


def test_tests_must_be_a_list(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", "name: demo\ntests: {}\n"))
    assert (issue.line, issue.column) == (2, 8)
    assert issue.message == "tests must be a list, got a mapping"
    assert issue.fix == "write tests as a YAML list, one '- item' per line"


def test_a_value_of_several_allowed_types_is_one_issue(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", "tests:\n  - id: a\n    input: 5\n"))
    assert issue.line == 3
    assert issue.message == (
        "tests[0].input must be a string, a list or a mapping (key: value lines), got the number 5"
    )


def test_wrong_value_inside_a_message_list(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input:
                  - role: usr
                    content: hi
                assertions: []
            """,
        )
    )
    assert (issue.line, issue.column) == (4, 15)
    assert issue.message == (
        "tests[0].input[0].role must be one of 'system', 'user', 'assistant' or 'tool', "
        "got the string 'usr'"
    )
    assert issue.fix == "did you mean 'user'?"


def test_missing_required_key(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", "tests:\n  - input: hi\n"))
    assert (issue.line, issue.column) == (2, 5)
    assert issue.message == "missing required key 'id' in tests[0]"
    assert issue.fix == "add 'id: my-test' to tests[0]"


def test_empty_tests(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", "name: demo\ntests: []\n"))
    assert (issue.line, issue.message) == (2, "tests must have at least 1 item")


def test_suite_name_must_be_a_slug(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml", "name: My Suite\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    assert (issue.line, issue.column) == (1, 7)
    assert issue.fix == "write name: my-suite"
