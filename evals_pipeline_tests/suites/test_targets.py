"""Where targets come from, which ones a suite selects, and how their paths resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.targets import CliTarget, MockTarget, ReplayTarget
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.target_catalog import find_targets_file
from evals_pipeline_tests.suites.conftest import Project, only

TWO_TARGETS = """\
targets:
  - name: Agent A
    provider: mock
    response: a
  - name: agent-b
    provider: cli
    command: ./run.sh {PROMPT_FILE} {OUTPUT_FILE}
    cwd: agents
    timeout_seconds: 30
"""


def test_targets_file_is_found_walking_up(project: Project) -> None:
    loaded = load_suite(
        project.write("evals/nested/s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    assert loaded.targets_file == project.root / ".agentv/targets.yaml"
    assert list(loaded.targets) == ["mock"]
    assert loaded.default_agents == ["mock"]


def test_the_nearest_targets_file_wins(project: Project) -> None:
    project.write("evals/.agentv/targets.yaml", "targets: [{name: near, provider: mock}]\n")
    loaded = load_suite(
        project.write("evals/s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    assert list(loaded.targets) == ["near"]


def test_inline_targets_take_precedence(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets:
              - {name: inline, provider: mock, response: x}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert list(loaded.targets) == ["inline"]
    assert loaded.targets_file is None


def test_execution_targets_select_in_suite_order(project: Project) -> None:
    project.root.joinpath("evals/agents").mkdir(parents=True)
    project.write(".agentv/targets.yaml", TWO_TARGETS)
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            execution:
              targets: [agent-b, Agent A]
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert list(loaded.targets) == ["agent-b", "agent-a"]
    assert loaded.default_agents == ["agent-b", "agent-a"]


def test_cli_cwd_from_targets_file_resolves_against_the_eval_folder(project: Project) -> None:
    # AgentV (providers/targets.ts) resolves a cli target's cwd from the eval file's folder,
    # not from the targets file's.
    project.root.joinpath("evals/agents").mkdir(parents=True)
    project.write(".agentv/targets.yaml", TWO_TARGETS)
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            "execution: {target: agent-b}\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    target = loaded.targets["agent-b"]
    assert isinstance(target, CliTarget)
    assert target.cwd == str(project.root / "evals/agents")


def test_cli_cwd_of_inline_target_resolves_against_the_eval_folder(project: Project) -> None:
    project.root.joinpath("evals/work").mkdir(parents=True)
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: cli
                command: run {PROMPT}
                cwd: work
                healthcheck: {command: run --version, cwd: work}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    target = loaded.targets["agent"]
    assert isinstance(target, CliTarget)
    assert target.cwd == str(project.root / "evals/work")
    assert target.healthcheck is not None
    assert target.healthcheck.cwd == str(project.root / "evals/work")


def test_cli_without_cwd_keeps_it_unset(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "targets: [{name: a, provider: cli, command: run}]\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    target = loaded.targets["a"]
    assert isinstance(target, CliTarget)
    assert target.cwd is None


def test_missing_cli_cwd(project: Project) -> None:
    project.write(".agentv/targets.yaml", TWO_TARGETS)
    issue = only(
        project.issues(
            "s.eval.yaml",
            "execution: {target: agent-b}\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    assert issue.file == str(project.root / ".agentv/targets.yaml")
    assert (issue.line, issue.message) == (8, "target cwd folder 'agents' not found")


def test_replay_sessions_dir_becomes_absolute(project: Project) -> None:
    project.root.joinpath("sessions").mkdir()
    project.write(
        ".agentv/targets.yaml", "targets: [{name: rec, provider: replay, sessions_dir: sessions}]\n"
    )
    loaded = load_suite(
        project.write("evals/s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    target = loaded.targets["rec"]
    assert isinstance(target, ReplayTarget)
    assert target.sessions_dir == str(project.root / "sessions")


def test_undefined_target_lists_the_defined_ones(project: Project) -> None:
    project.write(".agentv/targets.yaml", TWO_TARGETS.replace("    cwd: agents\n", ""))
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            execution:
              target: local-agent
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.column) == (2, 11)
    assert issue.message == (
        "target 'local-agent' is not defined; defined targets: Agent A, agent-b "
        f"(in {project.root / '.agentv/targets.yaml'})"
    )
    assert issue.fix == f"define it in {project.root / '.agentv/targets.yaml'}"


def test_undefined_target_in_the_matrix_suggests_a_close_name(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            execution:
              targets:
                - mock
                - mokc
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.column) == (4, 7)
    assert issue.message.startswith("target 'mokc' is not defined; defined targets: mock")
    assert issue.fix == "did you mean 'mock'?"


def test_a_tests_own_target_is_ignored_with_a_warning(project: Project) -> None:
    # AgentV 4.42.4 never reads a test's execution.target, even one naming no defined target.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets: [{name: one, provider: mock}]
            tests:
              - id: a
                input: hi
                assertions: [{type: contains, value: hi}]
                execution: {target: two}
            """,
        )
    )
    assert loaded.run_issues == []
    assert list(loaded.targets) == ["one"]
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (6, 17)
    assert warning.message == (
        "test 'a': execution.target is ignored, as in AgentV 4.42.4 (the test runs on the run's "
        "targets)"
    )
    assert "execution: {targets: [NAME, ..]}" in warning.fix


def test_a_target_entry_that_is_not_a_name_is_ignored_with_a_warning(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets: [{name: one, provider: mock}]
            tests:
              - id: a
                input: hi
                assertions: [{type: contains, value: hi}]
                execution:
                  targets: [one, {name: one}]
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (warning.line, warning.column) == (7, 22)
    assert warning.message == (
        "test 'a': execution.targets[1] is not a target name and is ignored, as in AgentV 4.42.4"
    )
    assert warning.fix.startswith("write the name alone: 'one'")


def test_several_targets_and_none_named_is_an_error(project: Project) -> None:
    project.write(".agentv/targets.yaml", TWO_TARGETS.replace("    cwd: agents\n", ""))
    issue = only(
        project.issues("s.eval.yaml", "name: demo\ntests: [{id: a, input: hi, assertions: []}]\n")
    )
    assert issue.line == 1
    assert issue.message.startswith("the suite does not say which target to run")
    assert issue.fix == (
        "add 'execution: {target: Agent A}', or 'targets: [Agent A, agent-b]' under execution: "
        "to run several"
    )


def test_several_targets_and_every_test_naming_one_is_still_an_error(project: Project) -> None:
    # A test's execution.target does not choose the run's target (AgentV 4.42.4).
    project.write(".agentv/targets.yaml", TWO_TARGETS.replace("    cwd: agents\n", ""))
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, execution: {target: Agent A}, assertions: []}]\n",
        )
    )
    issue = only(loaded.run_issues)
    assert issue.message.startswith("the suite does not say which target to run")


def test_no_targets_at_all(tmp_path: Path) -> None:
    path = tmp_path / "s.eval.yaml"
    if find_targets_file(path) is not None:
        pytest.skip("a targets file exists above the temporary folder")
    path.write_text(
        "name: demo\nexecution:\n  target: agent\ntests: [{id: a, input: hi, assertions: []}]\n"
    )
    assert only(load_suite(path).run_issues).line == 3  # the load succeeds: a run fails
    issue = only(Project(tmp_path).issues("s.eval.yaml"))
    assert issue.file == str(path)
    assert (issue.line, issue.column) == (3, 11)
    assert issue.message.startswith(
        "no targets file: looked for targets.yaml, targets.yml, .agentv/targets.yaml, "
        f".agentv/targets.yml in {tmp_path}, {tmp_path.parent}, "
    )
    assert issue.message.endswith(f", {Path.cwd()}")
    assert "provider: cli" in issue.fix
    assert "- name: my-agent" in issue.fix


def test_duplicate_target_names(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: a, provider: mock}\n  - {name: a, provider: mock}\n",
    )
    issue = only(
        project.issues(
            "s.eval.yaml", "execution: {target: a}\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    assert (issue.line, issue.message) == (3, "duplicate target name 'a' (first at line 2)")


def test_matrix_entry_can_alias_another_target(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            execution:
              targets:
                - {name: fast, use_target: mock}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    # AgentV labels the runs with the concrete target's name, and so do we.
    target = loaded.targets["mock"]
    assert isinstance(target, MockTarget)
    assert (target.name, target.response) == ("mock", "hello")
    assert loaded.agent_of["fast"] == "mock"


def test_targets_file_is_interpolated(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_REPLY", "from env")
    project.write(
        ".agentv/targets.yaml",
        "targets: [{name: m, provider: mock, response: '${{ AGENT_REPLY }}'}]\n",
    )
    loaded = load_suite(
        project.write("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    target = loaded.targets["m"]
    assert isinstance(target, MockTarget)
    assert target.response == "from env"


def test_names_a_matrix_does_not_run_are_warned(project: Project) -> None:
    # AgentV 4.42.4 drops them; a test naming none of the suite's targets runs nowhere.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets: [{name: one, provider: mock}, {name: two, provider: mock}]
            execution: {targets: [one, two]}
            tests:
              - id: some
                input: hi
                assertions: [{type: contains, value: hi}]
                execution: {targets: [one, three]}
              - id: none
                input: hi
                assertions: [{type: contains, value: hi}]
                execution: {targets: [three]}
            """,
        )
    )
    some, none = loaded.warnings
    assert (some.line, some.column) == (7, 26)
    assert some.message == (
        "test 'some': execution.targets names 'three', not among the suite's targets (one, two); "
        "ignored, as in AgentV 4.42.4"
    )
    assert (none.line, none.message) == (
        11,
        "test 'none': execution.targets names none of the suite's targets (one, two): the test "
        "runs on no target, as in AgentV 4.42.4",
    )
    assert [(c.case_key, c.agent) for c in resolve_cases(loaded)] == [("some", "one")]


def test_with_one_target_a_tests_names_are_not_warned(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            targets: [{name: one, provider: mock}, {name: two, provider: mock}]
            execution: {target: one}
            tests:
              - id: a
                input: hi
                assertions: [{type: contains, value: hi}]
                execution: {targets: [two]}
            """,
        )
    )
    assert loaded.warnings == []
    assert [(c.case_key, c.agent) for c in resolve_cases(loaded)] == [("a", "one")]
