"""Every class of bad input gives an issue naming the file, the right line and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.assertions import ASSERTION_TYPES, CodeGraderAssertion
from evals_pipeline.suites import SuiteError, SuiteIssue, load_suite
from evals_pipeline_tests.suites.conftest import Project, at_line, only


def test_issue_format() -> None:
    issue = SuiteIssue("a.eval.yaml", 3, 5, "unknown key 'critera'", "did you mean 'criteria'?")
    assert str(issue) == "a.eval.yaml:3:5: unknown key 'critera'\n    fix: did you mean 'criteria'?"
    error = SuiteError([issue, issue])
    assert error.issues == [issue]  # the same issue reached twice is reported once
    assert str(error) == str(issue)


# --- unknown keys ---------------------------------------------------------------------------


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
    assert issue.fix == "remove it; valid keys here: target, threshold, skip_defaults"


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
    issue = only(project.issues("evals/s.eval.yaml", "tests: [{id: a, input: hi}]\n"))
    assert issue.file == str(targets)
    assert (issue.line, issue.column) == (4, 5)
    assert issue.message == "unknown key 'respnse' in targets[0]"
    assert issue.fix == "did you mean 'response'?"


def test_agentv_settings_that_are_not_supported_say_so(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            execution:
              cache: true
            tests: [{id: a, input: hi}]
            """,
        )
    )
    assert issue.line == 2
    assert (
        issue.message == "'cache' in execution is an AgentV setting evals-pipeline does not support"
    )
    assert issue.fix == "remove 'cache'"


# --- duplicate test ids ---------------------------------------------------------------------


def test_duplicate_test_id(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: same
                input: one
              - id: other
                input: two
              - id: same
                input: three
            """,
        )
    )
    assert (issue.line, issue.column) == (6, 9)
    assert issue.message == "duplicate test id 'same' (line 6): already used at line 2"
    assert issue.fix == "give each test a unique id"


def test_test_ids_that_slugify_alike_collide(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: My Test
                input: one
              - id: my-test
                input: two
            """,
        )
    )
    assert issue.line == 4
    assert issue.message == (
        "test id 'my-test' (line 4) collides with 'My Test' (line 2): "
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
          - id: a
        """,
    )
    assert [i.line for i in issues] == [3, 4]


# --- missing files --------------------------------------------------------------------------


def test_missing_input_file(project: Project) -> None:
    issue = only(
        project.issues(
            "evals/s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                input_files:
                  - docs/spec.md
            """,
        )
    )
    assert issue.file == str(project.root / "evals/s.eval.yaml")
    assert (issue.line, issue.column) == (5, 9)
    assert issue.message == "input file 'docs/spec.md' not found"
    assert issue.fix == (
        f"looked in {project.root / 'evals'} and its parents up to {project.root}; correct the "
        "path (relative to the eval file's folder) or create the file"
    )


def test_input_files_are_found_in_parent_folders_up_to_the_repo_root(project: Project) -> None:
    project.write("docs/spec.md", "spec\n")
    loaded = load_suite(
        project.write(
            "evals/deep/s.eval.yaml",
            "tests: [{id: a, input: hi, input_files: [docs/spec.md]}]\n",
        )
    )
    assert loaded.suite.tests[0].input_files == ["docs/spec.md"]


def test_input_file_search_stops_at_the_repo_root(project: Project) -> None:
    outside = f"{project.root.name}-outside.md"  # unique: the parent folder is shared
    (project.root.parent / outside).write_text("x")
    issue = only(
        project.issues("s.eval.yaml", f"tests: [{{id: a, input: hi, input_files: [{outside}]}}]\n")
    )
    assert issue.message == f"input file '{outside}' not found"
    assert issue.fix.startswith(f"looked in {project.root};")


def test_missing_file_block(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input:
                  - role: user
                    content:
                      - type: file
                        value: fixtures/data.csv
                      - Summarise it.
            """,
        )
    )
    assert (issue.line, issue.column) == (7, 20)
    assert issue.message == "file block 'fixtures/data.csv' not found"
    assert "correct the path" in issue.fix


def test_missing_workspace_template(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            workspace:
              template: ./fixtures/empty-repo
            tests: [{id: a, input: hi}]
            """,
        )
    )
    assert (issue.line, issue.column) == (2, 13)
    assert issue.message == "workspace template folder './fixtures/empty-repo' not found"
    assert issue.fix == (
        f"looked for {project.root / 'fixtures/empty-repo'}; create the folder or correct the "
        "path (relative to the eval file's folder)"
    )


def test_missing_test_workspace_template(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                workspace: {template: repo}
            """,
        )
    )
    assert (issue.line, issue.message) == (4, "workspace template folder 'repo' not found")


def test_missing_grader_script(project: Project) -> None:
    issues = project.issues(
        "evals/s.eval.yaml",
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - type: code-grader
                command: [python3, graders/check.py, --strict, "print('a/b')"]
              - type: code-grader
                command: bash graders/run.sh
        """,
    )
    first = at_line(issues, 6)
    assert first.column == 28
    assert first.message == "grader script 'graders/check.py' not found"
    assert first.fix == (
        f"looked for {project.root / 'evals/graders/check.py'}; create it or correct the path "
        "(relative to the eval file's folder)"
    )
    assert at_line(issues, 8).message == "grader script 'graders/run.sh' not found"


def test_grader_scripts_resolve_against_the_grader_cwd(project: Project) -> None:
    project.write("tools/check.py", "print(1)\n")
    load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - {type: code-grader, command: [python3, check.py], cwd: ../tools}
            """,
        )
    )


def test_missing_replay_sessions_dir(project: Project) -> None:
    targets = project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: recorded
            provider: replay
            sessions_dir: recordings/run-1
        """,
    )
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi}]\n"))
    assert issue.file == str(targets)
    assert (issue.line, issue.column) == (4, 19)
    assert issue.message == "replay sessions folder 'recordings/run-1' not found"
    assert issue.fix == (
        f"looked for {project.root / 'recordings/run-1'}; create it or correct the path "
        f"(relative to the project folder, {project.root})"
    )


# --- assertion types ------------------------------------------------------------------------


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
    ("kind", "new"), [("llm-judge", "llm-grader"), ("llm_judge", "llm-grader")]
)
def test_old_llm_grader_names_name_the_new_type(project: Project, kind: str, new: str) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            f"""\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: {kind}
                    prompt: Is it polite?
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 15)
    assert issue.message == f"assertion type 'llm-judge' was renamed to '{new}'"
    assert issue.fix == f"write type: {new}"


def test_the_deprecated_rubric_type_names_rubrics(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: rubric, rubrics: [Polite]}]}]\n",
        )
    )
    assert issue.message == "assertion type 'rubric' was renamed to 'rubrics'"
    assert issue.fix == "write type: rubrics and rename its 'rubrics:' list to 'criteria:'"


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


def test_an_executable_prompt_is_not_supported(project: Project) -> None:
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
                      command: [python3, prompt.py]
            """,
        )
    )
    assert issue.line == 7
    assert issue.message == (
        "tests[0].assertions[0].prompt: executable prompt templates ({command: [...]}) are "
        "not supported"
    )
    assert issue.fix.startswith("write the prompt inline, or as prompt: file://")


def test_unsupported_rubric_keys_are_named(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: rubrics
                    criteria:
                      - id: tone
                        outcome: Polite
                        score_ranges: []
            """,
        )
    )
    assert issue.line == 9
    assert issue.message == (
        "'score_ranges' in tests[0].assertions[0].criteria[0] is an AgentV setting "
        "evals-pipeline does not support"
    )


def test_agent_mode_keys_of_an_llm_grader_are_named(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: llm-grader, max_steps: 5}]}]\n",
        )
    )
    assert issue.message == (
        "'max_steps' in tests[0].assertions[0] is an AgentV setting evals-pipeline does not support"
    )


def test_a_plain_sentence_assertion_is_an_llm_rubric(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - The answer is polite
            """,
        )
    )
    assert issue.line == 5
    assert issue.message == (
        "tests[0].assertions[0] is a plain sentence; an assertion must be a mapping with a 'type'"
    )
    assert issue.fix == (
        "write it as '- type: rubrics' with 'criteria: [\"The answer is polite\"]'"
    )


def test_a_rubric_without_type_gets_one_suggested(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{criteria: [Polite]}]}]\n",
        )
    )
    assert issue.message == "tests[0].assertions[0] looks like an LLM rubric but has no 'type'"
    assert issue.fix == "add 'type: rubrics' (it checks each item of 'criteria' with an LLM)"


def test_renamed_assertion_type(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: code_judge, command: x}]}]\n",
        )
    )
    assert issue.message == "assertion type 'code-judge' was renamed to 'code-grader'"
    assert issue.fix == "write type: code-grader"


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


# --- providers ------------------------------------------------------------------------------


def test_unknown_provider_lists_valid_ones(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: clii
                command: run
            tests: [{id: a, input: hi}]
            """,
        )
    )
    assert (issue.line, issue.column) == (3, 15)
    assert issue.message == (
        "unknown provider 'clii'; valid providers: cli, mock, replay, claude-code, codex, pi-agent, anthropic, openai"
    )
    assert issue.fix == "did you mean 'cli'?"


def test_agentv_agent_provider_suggests_a_cli_target(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: cc\n    provider: copilot\n")
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi}]\n"))
    assert issue.file == str(project.root / ".agentv/targets.yaml")
    assert (issue.line, issue.column) == (3, 15)
    assert issue.message.startswith("unknown provider 'copilot'; valid providers: cli, mock")
    assert issue.fix.startswith("run 'copilot' through provider: cli with a command")


# --- wrong types ----------------------------------------------------------------------------


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
    issue = only(project.issues("s.eval.yaml", "name: My Suite\ntests: [{id: a, input: hi}]\n"))
    assert (issue.line, issue.column) == (1, 7)
    assert issue.fix == "write name: my-suite"


def test_empty_file(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", ""))
    assert (issue.line, issue.message) == (1, "the eval file is empty")


def test_missing_eval_file(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "nope.eval.yaml")
    issue = only(caught.value.issues)
    assert issue.file == str(tmp_path / "nope.eval.yaml")
    assert issue.message == "file not found"


# --- YAML syntax ----------------------------------------------------------------------------


def test_yaml_syntax_error(project: Project) -> None:
    path = project.write("s.eval.yaml", "tests:\n  - id: a\n\tinput: hi\n")
    issue = only(project.issues("s.eval.yaml"))
    assert issue.file == str(path)
    assert (issue.line, issue.column) == (3, 1)
    assert issue.message.startswith("invalid YAML: found character '\\t'")
    assert issue.fix == "indent with spaces; YAML does not allow tabs for indentation"


def test_yaml_syntax_error_in_targets_file(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: [a\n")
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi}]\n"))
    assert issue.file == str(project.root / ".agentv/targets.yaml")
    assert issue.message.startswith("invalid YAML")


# --- many issues at once --------------------------------------------------------------------


def test_issues_from_suite_and_targets_file_are_collected_together(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: x\n    provider: nope\n")
    issues = project.issues(
        "s.eval.yaml",
        """\
        tests:
          - id: a
            critera: x
          - id: b
            input: 3
        """,
    )
    files = {Path(i.file).name for i in issues}
    assert files == {"s.eval.yaml", "targets.yaml"}
    assert len(issues) == 3
