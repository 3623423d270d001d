"""Resolving suites into cases: assertions, agents, settings, slugs, interpolation and aliases
(input forms and prompts: test_resolve_inputs.py)."""

from __future__ import annotations

import os

import pytest

from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.suites import (
    LoadedSuite,
    SuiteError,
    load_suite,
    resolve_cases,
    resolved_case_keys,
)
from evals_pipeline_tests.suites.conftest import Project, at_line, cases_of, one_case, only

# --- assertions -----------------------------------------------------------------------------

ASSERTING_SUITE = """\
assertions:
  - {type: is-json}
tests:
  - id: own-and-suite
    input: x
    assertions: [{type: contains, value: a}]
  - id: own-only
    input: x
    assertions: [{type: contains, value: b}]
    execution: {skip_defaults: true}
"""


def test_suite_assertions_follow_the_tests_own(project: Project) -> None:
    first, second = cases_of(project, ASSERTING_SUITE)
    assert [a.type for a in first.assertions] == ["contains", "is-json"]
    assert [a.type for a in second.assertions] == ["contains"]


def test_suite_skip_defaults_drops_suite_assertions_everywhere(project: Project) -> None:
    cases = cases_of(project, "execution: {skip_defaults: true}\n" + ASSERTING_SUITE)
    assert [[a.type for a in c.assertions] for c in cases] == [["contains"], ["contains"]]


def test_code_grader_cwd_is_absolute(project: Project) -> None:
    project.write("evals/check.py", "")
    project.write("tools/check.py", "")
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - {type: code-grader, command: [python3, check.py]}
              - {type: code-grader, command: [python3, check.py], cwd: ../tools}
        """,
    )
    graders = case.assertions
    assert all(isinstance(g, CodeGraderAssertion) for g in graders)
    assert [g.cwd for g in graders if isinstance(g, CodeGraderAssertion)] == [
        str(project.root / "evals"),
        str(project.root / "tools"),
    ]


# --- agents ---------------------------------------------------------------------------------

MATRIX_TARGETS = """\
targets:
  - {name: alpha, provider: mock, timeout_seconds: 30}
  - {name: beta, provider: mock}
"""

MATRIX_SUITE = """\
execution:
  targets: [alpha, beta]
  timeout_seconds: 120
tests:
  - {id: both, input: x, assertions: []}
  - {id: only-beta, input: y, execution: {targets: [beta]}, assertions: []}
"""


def test_each_test_runs_on_each_agent_unless_it_names_some(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    cases = cases_of(project, MATRIX_SUITE)
    assert [(c.case_key, c.agent) for c in cases] == [
        ("both", "alpha"),
        ("both", "beta"),
        ("only-beta", "beta"),
    ]
    # Target timeout first, then the suite's.
    assert [c.timeout_seconds for c in cases] == [30, 120, 120]
    assert {c.target.name for c in cases} == {"alpha", "beta"}


def test_the_case_keys_are_those_of_the_resolved_cases(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    suite = (
        MATRIX_SUITE
        + "  - {id: Only Alpha, input: z, execution: {targets: [alpha]}, assertions: []}\n"
        + "  - {id: Nowhere, input: z, execution: {targets: [gamma]}, assertions: []}\n"
    )
    loaded = load_suite(project.write("evals/s.eval.yaml", suite))
    keys = resolved_case_keys(loaded)
    assert keys == list(dict.fromkeys(c.case_key for c in resolve_cases(loaded)))
    assert keys == ["both", "only-beta", "only-alpha"]


def test_the_case_keys_of_a_suite_whose_target_does_not_resolve_raise(
    project: Project,
) -> None:
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            "execution: {target: nowhere}\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    with pytest.raises(SuiteError) as caught:
        resolved_case_keys(loaded)
    assert caught.value.issues == loaded.run_issues


def test_agents_filter(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    cases = cases_of(project, MATRIX_SUITE, agents=["alpha"])
    assert [(c.case_key, c.agent) for c in cases] == [("both", "alpha")]


PER_TEST_TARGETS = """\
execution:
  targets: [alpha, beta]
tests:
  - {id: plain, input: x, assertions: []}
  - {id: single, input: x, execution: {target: beta}, assertions: []}
  - {id: undefined, input: x, execution: {target: azure-llm}, assertions: []}
  - {id: listed, input: x, execution: {targets: [beta]}, assertions: []}
  - {id: some-unknown, input: x, execution: {targets: [alpha, gamma]}, assertions: []}
  - {id: none-known, input: x, execution: {targets: [gamma]}, assertions: []}
  - {id: empty, input: x, execution: {targets: []}, assertions: []}
  - {id: padded, input: x, execution: {targets: ["  beta ", ""]}, assertions: []}
  - {id: not-a-name, input: x, execution: {targets: [{name: beta}]}, assertions: []}
"""


def test_a_tests_targets_choose_among_several_as_in_agentv(project: Project) -> None:
    # AgentV 4.42.4 (run-eval.ts): execution.target is never read; execution.targets keeps the
    # run's targets it names (trimmed names only), none when it names none of them.
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    pairs = [(c.case_key, c.agent) for c in cases_of(project, PER_TEST_TARGETS)]
    assert pairs == [
        ("plain", "alpha"),
        ("plain", "beta"),
        ("single", "alpha"),
        ("single", "beta"),
        ("undefined", "alpha"),
        ("undefined", "beta"),
        ("listed", "beta"),
        ("some-unknown", "alpha"),
        ("empty", "alpha"),
        ("empty", "beta"),
        ("padded", "beta"),
        ("not-a-name", "alpha"),
        ("not-a-name", "beta"),
    ]


def test_with_one_target_every_test_runs_on_it(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    suite = PER_TEST_TARGETS.replace("targets: [alpha, beta]", "target: alpha", 1)
    cases = cases_of(project, suite)
    assert {c.agent for c in cases} == {"alpha"}
    assert len(cases) == 9


def test_one_run_target_runs_every_test_on_it(project: Project) -> None:
    # `run --target beta` is AgentV's single cliTarget: no test chooses, none is left out.
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    loaded = load_suite(project.write("evals/s.eval.yaml", PER_TEST_TARGETS))
    cases = resolve_cases(loaded, targets=["beta"])
    assert {c.agent for c in cases} == {"beta"}
    assert len(cases) == 9
    # ...whereas `agents` only keeps the agents' cases of the suite's own targets.
    kept = [c.case_key for c in resolve_cases(loaded, agents=["alpha"])]
    assert kept == ["plain", "single", "undefined", "some-unknown", "empty", "not-a-name"]


def test_several_run_targets_are_chosen_among(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    loaded = load_suite(project.write("evals/s.eval.yaml", PER_TEST_TARGETS))
    pairs = {(c.case_key, c.agent) for c in resolve_cases(loaded, targets=["beta", "alpha"])}
    assert ("listed", "beta") in pairs and ("listed", "alpha") not in pairs
    assert not any(key == "none-known" for key, _ in pairs)


def test_unknown_agent_in_filter(project: Project) -> None:
    project.write(".agentv/targets.yaml", MATRIX_TARGETS)
    loaded = load_suite(project.write("evals/s.eval.yaml", MATRIX_SUITE))
    with pytest.raises(SuiteError) as caught:
        resolve_cases(loaded, agents=["gamma"])
    issue = only(caught.value.issues)
    assert issue.message == "the suite has no agent 'gamma'"
    assert issue.fix == "choose from: alpha, beta"


def test_default_timeout_is_600_seconds(project: Project) -> None:
    assert one_case(project, "tests: [{id: a, input: hi, assertions: []}]\n").timeout_seconds == 600


# --- thresholds, trials, workspaces, metadata -----------------------------------------------


def test_settings_carried_into_each_case(project: Project) -> None:
    project.root.joinpath("evals/repo").mkdir(parents=True)
    project.root.joinpath("evals/other").mkdir(parents=True)
    cases = cases_of(
        project,
        """\
        execution:
          threshold: 0.6
          trials: {count: 3, strategy: mean}
        workspace: {template: repo}
        tests:
          - {id: a, input: hi, metadata: {difficulty: easy}, assertions: []}
          - {id: b, input: hi, execution: {threshold: 0.9}, workspace: {template: other}, assertions: []}
        """,
    )
    first, second = cases
    # The suite's threshold gates the run only (AgentV 4.42.4); a test's own one is its verdict.
    assert (first.threshold, second.threshold) == (0.8, 0.9)
    assert first.trials.count == 3 and first.trials.strategy == "mean"
    assert first.metadata == {"difficulty": "easy"}
    assert first.workspace_template == str(project.root / "evals/repo")
    assert second.workspace_template == str(project.root / "evals/other")
    assert first.base_dir == str(project.root / "evals")
    assert first.suite == "s"
    assert first.suite_path == str(project.root / "evals/s.eval.yaml")


# --- suite slugs ----------------------------------------------------------------------------


def test_suite_slug_from_name_or_file_name(project: Project) -> None:
    named = load_suite(
        project.write(
            "a.eval.yaml", "name: hello-suite\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    unnamed = load_suite(
        project.write("My Checks.eval.yml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    folder = load_suite(
        project.write("coding-tasks/EVAL.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    assert (named.slug, unnamed.slug, folder.slug) == ("hello_suite", "my_checks", "coding_tasks")
    assert isinstance(named, LoadedSuite) and named.path.is_absolute()


# --- environment interpolation and aliases --------------------------------------------------


def test_environment_interpolation(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREETING", "Bonjour")
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input: "Say ${{ GREETING }}${{NOT_SET_ANYWHERE}}!"
            assertions: [{type: contains, value: "${{ GREETING }}"}]
        """,
    )
    assert case.prompt == "Say Bonjour!"
    assert case.assertions[0].model_dump()["value"] == "Bonjour"


def test_env_files_are_loaded_nearest_first(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NEAR", "FAR", "SHELL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SHELL_SET", "shell")
    project.write("evals/.env", 'NEAR="near"\nSHELL_SET=file\n')
    project.write(".env", "NEAR=far\nexport FAR=far # comment\n")
    try:
        case = one_case(
            project,
            "tests: [{id: a, input: '${{ NEAR }} ${{ FAR }} ${{ SHELL_SET }} [${{ NONE }}]', assertions: []}]\n",
        )
    finally:
        for name in ("NEAR", "FAR"):
            os.environ.pop(name, None)
    # The nearest file wins, a variable the shell set is kept, an unset one is "".
    assert case.prompt == "near far shell []"


def test_whole_env_placeholder_takes_a_number_or_boolean(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THRESHOLD", "0.5")
    monkeypatch.setenv("SKIP", "true")
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            execution: {threshold: "${{ THRESHOLD }}"}
            tests:
              - {id: a, input: hi, execution: {skip_defaults: "${{ SKIP }}"}, assertions: []}
            """,
        )
    )
    assert loaded.suite.execution.threshold == 0.5
    assert loaded.suite.tests[0].execution is not None
    assert loaded.suite.tests[0].execution.skip_defaults is True


def test_deprecated_aliases_are_accepted_with_warnings(project: Project) -> None:
    project.write("evals/check.py", "")
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            target: mock
            execution:
              evaluators:
                - {type: is_json}
            eval_cases:
              - id: a
                input: hi
                evaluators:
                  - type: code_grader
                    script: [python3, check.py]
                criteria: says hi
            """,
        )
    )
    warnings = [(w.line, w.message, w.fix) for w in loaded.warnings]
    assert warnings == [
        (1, "top-level 'target' is deprecated", "move it under execution: as execution.target"),
        (
            3,
            "'execution.evaluators' is a deprecated place for suite-level assertions",
            "move the list to the top-level 'assertions:'",
        ),
        (5, "'eval_cases' is deprecated", "rename it to 'tests'"),
        (8, "'evaluators' is deprecated", "rename it to 'assertions'"),
        (10, "'script' is deprecated", "rename it to 'command'"),
    ]
    (case,) = resolve_cases(loaded)
    assert [a.type for a in case.assertions] == ["code-grader", "is-json"]
    grader = case.assertions[0]
    assert isinstance(grader, CodeGraderAssertion)
    assert grader.command == ["python3", "check.py"]


def test_alias_and_canonical_key_together_warns_and_the_canonical_wins(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests: [{id: a, input: hi, criteria: x}]
            eval_cases: [{id: b, input: hi, criteria: x}]
            """,
        )
    )
    warning = at_line(loaded.warnings, 2)
    assert warning.message == (
        "both 'tests' and its deprecated alias 'eval_cases' are set in the top level; "
        "'eval_cases' is ignored"
    )
    assert warning.fix == "keep only 'tests'"
    assert [t.id for t in loaded.suite.tests] == ["a"]


def test_errors_after_an_alias_point_at_the_written_key(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            name: demo
            eval_cases:
              - id: a
                input: hi
                criteria: [x]
            """,
        )
    )
    assert (issue.line, issue.message[:28]) == (5, "tests[0].criteria must be a ")


def test_a_test_without_assertions_warns(project: Project) -> None:
    loaded = load_suite(
        project.write("s.eval.yaml", "tests:\n  - id: a\n    input: hi\n    criteria: Good.\n")
    )
    warning = only(loaded.warnings)
    assert warning.line == 2
    assert warning.message == (
        "test 'a' has no assertions, and its criteria are judged by an llm-grader only when its "
        "agent has a grader target"
    )
    assert warning.fix.startswith("add grader_target: <llm target> to the agent target")


def test_legacy_execution_graders_append_to_suite_assertions(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            assertions:
              - {type: is-json}
            execution:
              evaluators:
                - {type: contains, valu: x}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.column) == (5, 24)
    assert issue.message == "unknown key 'valu' in assertions[1]"
