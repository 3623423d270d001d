"""A targets file with a broken entry: AgentV validates only the targets a run selects, so the
entry's problems are reported when something runs, delegates to or falls back on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError, load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only

# Line 6 is the broken target's empty model (an unset ${{ VAR }} interpolates to "").
BROKEN_AND_GOOD = """\
targets:
  - name: good
    provider: mock
    response: hi
  - name: broken
    model: ${{ UNSET_MODEL_FOR_TEST }}
    provider: openai
    api_key: sk-test
  - name: alias
    use_target: broken
  - name: with-fallback
    provider: mock
    fallback_targets: [broken]
"""


@pytest.fixture
def broken(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("UNSET_MODEL_FOR_TEST", raising=False)
    project.write(".agentv/targets.yaml", BROKEN_AND_GOOD)
    return project


def test_a_suite_not_running_the_broken_target_loads(broken: Project) -> None:
    suite = "execution: {target: good}\ntests: [{id: a, input: hi, assertions: []}]\n"
    loaded = load_suite(broken.write("s.eval.yaml", suite))
    assert list(loaded.targets) == ["good"]


def test_running_the_broken_target_reports_its_problem_in_the_targets_file(
    broken: Project,
) -> None:
    suite = "execution: {target: broken}\ntests: [{id: a, input: hi, assertions: []}]\n"
    issue = only(broken.issues("s.eval.yaml", suite))
    assert issue.file == str(broken.root / ".agentv/targets.yaml")
    assert (issue.line, issue.column) == (6, 12)
    assert issue.message == "targets[1].model must not be empty"


def test_delegating_to_the_broken_target_reports_its_problem(broken: Project) -> None:
    suite = "execution: {target: alias}\ntests: [{id: a, input: hi, assertions: []}]\n"
    assert only(broken.issues("s.eval.yaml", suite)).message == "targets[1].model must not be empty"


def test_a_broken_fallback_of_a_selected_target_is_reported(broken: Project) -> None:
    suite = "execution: {target: with-fallback}\ntests: [{id: a, input: hi, assertions: []}]\n"
    issue = only(broken.issues("s.eval.yaml", suite))
    assert (issue.line, issue.message) == (6, "targets[1].model must not be empty")


def test_an_entry_agentv_cannot_read_stays_a_load_error(project: Project) -> None:
    # AgentV's targets-file reader refuses an entry without a name or provider (targets-file.ts).
    project.write(".agentv/targets.yaml", "targets:\n  - name: a\n    provider: mock\n  - x: 1\n")
    suite = "execution: {target: a}\ntests: [{id: a, input: hi, assertions: []}]\n"
    issue = only(project.issues("s.eval.yaml", suite))
    assert issue.line == 4
    assert issue.message == "targets[1] has no 'provider'"


def test_a_bad_value_under_an_alias_names_the_key_not_the_entry(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # model_reasoning_effort is AgentV's spelling of reasoning_effort, renamed before validation.
    monkeypatch.delenv("UNSET_EFFORT_FOR_TEST", raising=False)
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: c
            provider: codex
            model: gpt-5
            model_reasoning_effort: ${{ UNSET_EFFORT_FOR_TEST }}
        """,
    )
    issue = only(
        project.issues(
            "s.eval.yaml", "execution: {target: c}\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    assert "got a mapping" not in issue.message
    assert issue.message.startswith("targets[0].reasoning_effort must be ")
    assert issue.message.endswith("got an empty string") or "''" in issue.message


def test_schema_tag_in_a_targets_file_is_accepted(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "$schema: agentv-targets-v2.2\ntargets: [{name: m, provider: mock, response: hi}]\n",
    )
    loaded = load_suite(
        project.write("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    assert list(loaded.targets) == ["m"]


def test_an_llm_grader_naming_an_undefined_target_loads_with_a_warning(project: Project) -> None:
    # AgentV loads it and scores that grader 0 when it runs (conformance/llm-grader-undefined-target).
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: llm-grader
                    target: nowhere
                    prompt: Is it polite?
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (Path(warning.file).name, warning.line, warning.column) == ("s.eval.yaml", 6, 17)
    assert warning.message.startswith("llm-grader target 'nowhere' is not defined")


def test_an_unresolvable_run_target_fails_the_run_not_the_load(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AgentV: `agentv validate` accepts it; `agentv eval` fails with "Failed to resolve target".
    monkeypatch.delenv("UNSET_TARGET_FOR_TEST", raising=False)
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - name: llm\n    use_target: ${{ UNSET_TARGET_FOR_TEST }}\n",
    )
    path = project.write(
        "s.eval.yaml", "execution: {target: llm}\ntests: [{id: a, input: hi, assertions: []}]\n"
    )
    loaded = load_suite(path)
    issue = only(loaded.run_issues)
    assert (issue.line, issue.message) == (
        3,
        "target 'llm' has an empty use_target (an unset ${{ VAR }}?)",
    )
    with pytest.raises(SuiteError) as caught:
        resolve_cases(loaded)
    assert caught.value.issues == [issue]


def test_an_undefined_run_target_is_a_run_issue(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "execution: {target: nowhere}\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    assert only(loaded.run_issues).message.startswith("target 'nowhere' is not defined")


def test_run_issues_come_with_the_load_errors_of_a_broken_file(project: Project) -> None:
    suite = "execution: {target: nowhere}\ntests: [{id: a, input: hi, assertions: []}, {id: a, input: hi, assertions: []}]\n"
    messages = [issue.message for issue in project.issues("s.eval.yaml", suite)]
    assert any(m.startswith("target 'nowhere' is not defined") for m in messages)
    assert any("duplicate" in m for m in messages)


def test_a_grader_target_from_an_unset_variable_makes_its_cases_errors(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSET_GRADER_FOR_TEST", raising=False)
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: agent
            provider: mock
            response: hi
            grader_target: grader
          - name: grader
            use_target: ${{ UNSET_GRADER_FOR_TEST }}
        """,
    )
    suite = """\
        tests:
          - id: a
            input: hi
            assertions: [{type: llm-grader, prompt: "Polite?"}]
        """
    loaded = load_suite(project.write("s.eval.yaml", suite))
    case = only(resolve_cases(loaded))
    assert case.cannot_run is not None and "needs grader_target 'grader'" in case.cannot_run
