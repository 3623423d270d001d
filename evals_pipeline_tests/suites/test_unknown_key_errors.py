"""Unknown keys in suites, tests, assertions and targets name the key and suggest a fix."""

from __future__ import annotations

from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only


def test_unknown_key_in_a_test(project: Project) -> None:
    path = project.write(
        "s.eval.yaml",
        """\
        tests:
          - id: a
            input: hi
            critera: says hi
            assertions: [{type: contains, value: hi}]
        """,
    )
    issue = only(project.issues("s.eval.yaml"))
    assert issue.file == str(path)
    assert (issue.line, issue.column) == (4, 5)
    assert issue.message == "unknown key 'critera' in tests[0]"
    assert issue.fix == "did you mean 'criteria'?"


def test_unknown_key_at_top_level(project: Project) -> None:
    issues = project.issues(
        "s.eval.yaml",
        """\
        name: demo
        descripton: typo
        tests: [{id: a, input: hi, assertions: [{type: is-json}]}]
        """,
    )
    issue = only(issues)
    assert (issue.line, issue.message) == (2, "unknown key 'descripton' in the top level")
    assert issue.fix == "did you mean 'description'?"


def test_unknown_key_without_a_close_match_lists_the_valid_keys(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                execution:
                  zzz: 1
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 7)
    assert issue.message == "unknown key 'zzz' in tests[0].execution"
    assert issue.fix == (
        "remove it; valid keys here: target, targets, threshold, skip_defaults, workers, cache, "
        "trials, budget_usd, fail_on_error, assertions"
    )


def test_unknown_key_in_execution(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            execution:
              worker: 3
            tests: [{id: a, input: hi}]
            """,
        )
    )
    assert (issue.line, issue.message) == (2, "unknown key 'worker' in execution")
    assert issue.fix == "did you mean 'workers'?"


def test_unknown_key_in_a_deterministic_assertion(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: contains
                    valu: hi
            """,
        )
    )
    # The missing 'value' is the same mistake: one issue, at the misspelt key.
    assert (issue.line, issue.column) == (6, 9)
    assert issue.message == "unknown key 'valu' in tests[0].assertions[0]"
    assert issue.fix == "did you mean 'value'?"


def test_unknown_keys_of_a_code_grader_go_into_its_config(project: Project) -> None:
    project.write("check.py", "print('ok')\n")
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: code-grader
                    command: [python3, check.py]
                    expect_file: hello.py
                    config: {strict: true}
            """,
        )
    )
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, CodeGraderAssertion)
    assert grader.config == {"expect_file": "hello.py", "strict": True}


def test_unknown_key_in_an_inline_target(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: cli
                command: run {PROMPT}
                timeoutSeconds: 30
            tests: [{id: a, input: hi}]
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 5)
    assert issue.message == "unknown key 'timeoutSeconds' in targets[0]"
    assert issue.fix == "did you mean 'timeout_seconds'?"


def test_unknown_key_in_targets_file_points_into_that_file(project: Project) -> None:
    targets = project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: mock
            provider: mock
            respnse: hi
        """,
    )
    # AgentV reads only the keys its provider knows: the target runs, the key is a warning.
    suite = project.write("evals/s.eval.yaml", "tests: [{id: a, input: hi, criteria: hi}]\n")
    loaded = load_suite(suite)
    assert loaded.run_issues == []
    issue = only([w for w in loaded.warnings if w.file == str(targets)])
    assert (issue.line, issue.column) == (4, 5)
    assert issue.message == "unknown key 'respnse' in targets[0], ignored (AgentV does not read it)"
    assert issue.fix == "did you mean 'response'?"
