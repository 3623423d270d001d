"""Assertion types: unknown, renamed, unsupported or missing types, and unsupported grader keys."""

from __future__ import annotations

import pytest

from evals_pipeline.models.assertions import ASSERTION_TYPES
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only


def test_unknown_assertion_type_lists_valid_types_and_suggests(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: contians
                    value: hi
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 15)
    assert issue.message == (
        f"unknown assertion type 'contians'; valid types: {', '.join(ASSERTION_TYPES)}"
    )
    assert issue.fix == "did you mean 'contains'?"


def test_snake_case_assertion_types_are_normalised(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions: [{type: is_json}, {type: starts_with, value: h}]
            """,
        )
    )
    assert [a.type for a in loaded.suite.tests[0].assertions] == ["is-json", "starts-with"]


@pytest.mark.parametrize(
    ("kind", "new"),
    [
        ("llm-judge", "llm-grader"),
        ("llm_judge", "llm-grader"),
        ("code-judge", "code-grader"),
        ("code_judge", "code-grader"),
    ],
)
def test_old_judge_types_are_skipped_with_a_warning_as_in_agentv(
    project: Project, kind: str, new: str
) -> None:
    path = project.write(
        "s.eval.yaml",
        f"""\
        targets: [{{name: a, provider: mock}}]
        tests:
          - id: a
            input: hi
            assertions:
              - name: old
                type: {kind}
                script: [python3, g.py]
              - type: contains
                value: hi
        """,
    )
    loaded = load_suite(path)
    assert [a.type for a in loaded.suite.tests[0].assertions] == ["contains"]
    warning = only([w for w in loaded.warnings if "skipped" in w.message])
    assert (warning.line, warning.column) == (7, 9)
    assert warning.message == (
        f"assertion 'old' of type '{kind}' is skipped: AgentV 4.42.4 skips this deprecated "
        "type, so it never grades"
    )
    assert warning.fix == f"write type: {new} (and command: for script:) to run it"


@pytest.mark.parametrize("kind", ["llm-rubric", "agent_rubric", "agent-judge"])
def test_other_llm_grader_types_are_not_supported(project: Project, kind: str) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            f"tests: [{{id: a, input: hi, assertions: [{{type: {kind}, value: Polite}}]}}]\n",
        )
    )
    normalised = kind.replace("_", "-")
    assert issue.message == f"assertion type '{normalised}' is not supported by evals-pipeline"
    assert issue.fix.startswith("use type: llm-grader")


def test_an_executable_prompt_command_must_be_argv(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: llm-grader
                    prompt:
                      command: python3 prompt.py
            """,
        )
    )
    assert (issue.line, issue.column) == (7, 20)
    assert issue.message == (
        "tests[0].assertions[0].prompt.command: prompt.command must be a list of argv tokens: "
        "write command: [python3, prompt.py]"
    )


def test_a_test_whose_prompt_script_is_missing_is_skipped_with_a_warning(
    project: Project,
) -> None:
    # AgentV's validate accepts the file; its loader skips the test ("Skipping test 'a': ...
    # prompt command file not found"), and so does the load here.
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: mock, provider: mock, response: hi, grader_target: judge}\n"
        "  - {name: judge, provider: openai, model: m}\n",
    )
    suite = """\
        tests:
          - id: a
            input: hi
            assertions:
              - name: judge
                type: llm-grader
                prompt:
                  script: [python3, prompts/missing.py]
          - id: b
            input: hi
            assertions: [{type: contains, value: hi}]
        """
    loaded = load_suite(project.write("s.eval.yaml", suite))
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (8, 11)  # `script:` is read as `command:`
    assert warning.message == (
        "prompt command file 'prompts/missing.py' not found: the test is skipped, as AgentV "
        "skips it"
    )
    assert [case.test_id for case in resolve_cases(loaded)] == ["b"]
    lone = suite.split("          - id: b")[0]
    issue = only(project.issues("s.eval.yaml", lone))  # nothing left to run: a run's error
    assert issue.message == warning.message
    assert load_suite(project.root / "s.eval.yaml").run_issues == [issue]  # validate accepts it


def test_a_rubric_without_type_gets_one_suggested(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{criteria: [Polite]}]}]\n",
        )
    )
    assert issue.message == "tests[0].assertions[0] looks like an LLM rubric but has no 'type'"
    assert issue.fix == "add 'type: rubrics' (it checks each item of 'criteria' with an LLM)"


def test_assertion_without_type(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - value: hi
            """,
        )
    )
    assert (issue.line, issue.message) == (5, "tests[0].assertions[0] has no 'type'")
    assert issue.fix.startswith("add 'type:' with one of: contains,")


def test_errors_after_a_skipped_judge_still_point_at_their_line(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: code_judge
                    script: [python3, g.py]
                  - type: contians
                    value: hi
            """,
        )
    )
    assert (issue.line, issue.column) == (7, 15)
    assert issue.message.startswith("unknown assertion type 'contians'")


def test_an_assertion_id_is_accepted_and_names_nothing(project: Project) -> None:
    # AgentV 4.42.4 (autoresearch example): `id` is read by no grader; names stay derived.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - {type: contains, value: P0, id: CLASSIFIES_P0}
                  - {type: is-json, id: RETURNS_JSON}
            """,
        )
    )
    contains, is_json = loaded.suite.tests[0].assertions
    assert (contains.id, contains.display_name()) == ("CLASSIFIES_P0", "contains-P0")
    assert (is_json.id, is_json.display_name()) == ("RETURNS_JSON", "is-json")
    assert loaded.warnings == []
