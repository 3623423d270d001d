"""Test ids that repeat, or slugify to the same partition key, are reported with both lines."""

from __future__ import annotations

from evals_pipeline_tests.suites.conftest import Project, only


def test_duplicate_test_id(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: same
                input: one
                assertions: []
              - id: other
                input: two
                assertions: []
              - id: same
                input: three
                assertions: []
            """,
        )
    )
    assert (issue.line, issue.column) == (8, 9)
    assert issue.message == "duplicate test id 'same' (line 8): already used at line 2"
    assert issue.fix == "give each test a unique id"


def test_test_ids_that_slugify_alike_collide(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: My Test
                input: one
                assertions: []
              - id: my-test
                input: two
                assertions: []
            """,
        )
    )
    assert issue.line == 5
    assert issue.message == (
        "test id 'my-test' (line 5) collides with 'My Test' (line 2): "
        "both become the partition key 'my-test'"
    )
    assert issue.fix == "give each test a unique id"


def test_duplicate_ids_are_reported_with_validation_errors(project: Project) -> None:
    issues = project.issues(
        "s.eval.yaml",
        """\
        tests:
          - id: a
            input: 5
            assertions: []
          - id: a
            input: hi
            assertions: []
        """,
    )
    assert [i.line for i in issues] == [3, 5]
