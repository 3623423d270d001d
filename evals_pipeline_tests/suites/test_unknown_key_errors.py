"""Unknown keys name the key and suggest a fix: a warning at the top level and in a test, an
assertion or a target (AgentV ignores them there), an error elsewhere."""

from __future__ import annotations

from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only


def test_unknown_key_in_a_test_is_ignored_with_a_warning(project: Project) -> None:
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
    loaded = load_suite(path)
    warning = only(loaded.warnings)
    assert warning.file == str(path)
    assert (warning.line, warning.column) == (4, 5)
    assert (
        warning.message == "unknown field 'critera' in tests[0], ignored (did you mean 'criteria'?)"
    )
    assert warning.fix == "rename it to 'criteria'"
    assert loaded.suite.tests[0].criteria == ""


def test_unknown_key_at_top_level_is_ignored_with_a_warning(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            name: demo
            descripton: typo
            tests: [{id: a, input: hi, assertions: [{type: is-json}]}]
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (2, 1)
    assert warning.message == (
        "unknown field 'descripton' at the top level, ignored (did you mean 'description'?)"
    )


def test_unknown_key_in_an_assertion_is_ignored_with_a_warning(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: contains
                    value: hi
                    source: manual
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (7, 9)
    assert warning.message == "unknown field 'source' in tests[0].assertions[0], ignored"
    assert warning.fix.startswith("remove it, as AgentV ignores it too; valid keys here: ")


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
                assertions: []
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
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.message) == (2, "unknown key 'worker' in execution")
    assert issue.fix == "did you mean 'workers'?"


def test_a_misspelt_required_key_of_an_assertion_stays_an_error(project: Project) -> None:
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


def test_a_camel_case_key_in_an_inline_target_stays_an_error(project: Project) -> None:
    # AgentV refuses a target's camelCase field ("no longer supported in targets.yaml").
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: cli
                command: run {PROMPT}
                timeoutSeconds: 30
            tests: [{id: a, input: hi, assertions: [{type: is-json}]}]
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 5)
    assert issue.message == "unknown key 'timeoutSeconds' in targets[0]"
    assert issue.fix == "did you mean 'timeout_seconds'?"


def test_unknown_key_in_an_inline_target_is_ignored_with_a_warning(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: cli
                command: echo {PROMPT}
                timeout_ms: 30000
            tests: [{id: a, input: hi, assertions: [{type: is-json}]}]
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (5, 5)
    assert warning.message.startswith("unknown field 'timeout_ms' in targets[0], ignored")
    assert "agent" in loaded.targets


def test_unknown_key_in_targets_file_warns_in_that_file(project: Project) -> None:
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
    warning = only([w for w in loaded.warnings if w.file == str(targets)])
    assert (warning.line, warning.column) == (4, 5)
    assert warning.message == (
        "unknown field 'respnse' in targets[0], ignored (did you mean 'response'?)"
    )
