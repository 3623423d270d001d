"""What will certainly fail at run, named at load as a warning at the line that names it (AgentV
accepts these suites): code graders whose program or script cannot start, agent commands not
found. The cases concerned are marked so a run makes them errors without starting the agent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.programs import start_problem
from evals_pipeline_tests.suites.conftest import Project, only


def grader_suite(command: str) -> str:
    return f"""\
tests:
  - id: graded
    input: hi
    assertions:
      - type: code-grader
        command: {command}
  - id: fine
    input: hi
    assertions: [{{type: contains, value: hello}}]
"""


def script(project: Project, name: str, *, runnable: bool) -> Path:
    path = project.write(name, "#!/bin/sh\necho '{\"score\": 1}'\n")
    os.chmod(path, 0o755 if runnable else 0o644)
    return path


def test_a_missing_grader_script_is_a_located_warning(project: Project) -> None:
    path = project.write("s.eval.yaml", grader_suite("[python3, graders/missing.py]"))
    loaded = load_suite(path)
    warning = only(loaded.warnings)
    assert (warning.file, warning.line, warning.column) == (str(path), 6, 18)
    assert warning.message.startswith(
        "code-grader 'code-grader' cannot start: script 'graders/missing.py' is not found "
        f"(looked for {project.root / 'graders/missing.py'})"
    )
    assert list(loaded.ungradable) == ["graded"]
    assert loaded.ungradable["graded"].startswith(f"cannot be graded: {path}:6:18: code-grader")
    cases = {c.test_id: c for c in resolve_cases(loaded)}
    assert cases["graded"].cannot_run == loaded.ungradable["graded"]
    assert cases["fine"].cannot_run is None


def test_a_script_given_to_its_interpreter_needs_no_run_bit(project: Project) -> None:
    script(project, "grade.sh", runnable=False)
    loaded = load_suite(project.write("s.eval.yaml", grader_suite("[sh, grade.sh]")))
    assert loaded.warnings == [] and loaded.ungradable == {}


def test_a_script_run_as_the_program_needs_its_run_bit(project: Project) -> None:
    graded = script(project, "grade.sh", runnable=False)
    path = project.write("s.eval.yaml", grader_suite("./grade.sh"))
    warning = only(load_suite(path).warnings)
    assert (warning.line, warning.column) == (6, 18)
    assert f"program './grade.sh' lacks its run bit ({graded})" in warning.message
    assert warning.fix.startswith(f"chmod +x {graded}")
    os.chmod(graded, 0o755)
    assert load_suite(path).warnings == []


def test_a_program_that_is_not_on_path_is_named(project: Project) -> None:
    script(project, "grade.sh", runnable=True)
    path = project.write("s.eval.yaml", grader_suite("[grade.sh]"))  # not ./grade.sh
    warning = only(load_suite(path).warnings)
    assert "'grade.sh' is not found on PATH" in warning.message
    assert "write ./grade.sh" in warning.fix


def test_suite_level_graders_make_every_test_ungradable(project: Project) -> None:
    path = project.write(
        "s.eval.yaml",
        """\
        assertions:
          - name: shared
            type: code-grader
            command: [node, gone.js]
        tests:
          - {id: a, input: hi, assertions: []}
          - {id: b, input: hi, execution: {skip_defaults: true}, assertions: [{type: contains, value: x}]}
        """,
    )
    loaded = load_suite(path)
    warning = only([w for w in loaded.warnings if "cannot start" in w.message])
    assert warning.line == 4 and "code-grader 'shared' cannot start" in warning.message
    assert list(loaded.ungradable) == ["a"]


def test_shell_lines_whose_program_the_shell_computes_are_not_judged(tmp_path: Path) -> None:
    for line in ("cd sub && ./run.sh", "$TOOL x", "FOO=1 echo hi", "if true; then :; fi"):
        assert start_problem(line, tmp_path) is None, line
    assert start_problem("FOO=1 ./nothing-here.sh", tmp_path) is not None
    assert start_problem("no-such-program-xyz --flag", tmp_path) is not None
    assert start_problem("python3 -m json.tool", tmp_path) is None
    assert start_problem("python3 -c 'print(1)'", tmp_path) is None


def test_an_agent_command_not_on_path_is_a_warning_at_the_command(project: Project) -> None:
    targets = project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: agent
            provider: cli
            command: no-such-agent-xyz --prompt {PROMPT} --out {OUTPUT_FILE}
        """,
    )
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]\n",
        )
    )
    warning = only(loaded.warnings)
    assert (warning.file, warning.line, warning.column) == (str(targets), 4, 14)
    assert warning.message.startswith(
        "the command of target 'agent' cannot start: 'no-such-agent-xyz' is not found on PATH"
    )
    assert list(loaded.unstartable) == ["agent"]
    assert only(resolve_cases(loaded)).cannot_run == loaded.unstartable["agent"]


def test_an_agent_command_with_a_fallback_is_not_blocked(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: agent
            provider: cli
            command: no-such-agent-xyz {PROMPT}
            fallback_targets: [backup]
          - name: backup
            provider: mock
        """,
    )
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "execution: {target: agent}\ntests: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]\n",
        )
    )
    assert "its fallback targets run instead" in only(loaded.warnings).message
    assert loaded.unstartable == {}


def test_a_relative_agent_command_runs_in_the_workspace_so_is_not_judged(
    project: Project,
) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets: [{name: agent, provider: cli, command: './made-by-the-template.sh {PROMPT}'}]\n",
    )
    (project.root / "template").mkdir()
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "workspace: {template: template}\ntests: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]\n",
        )
    )
    assert loaded.warnings == [] and loaded.unstartable == {}


def test_placeholders_in_an_agent_command_are_filled_or_left_unjudged(project: Project) -> None:
    project.write("agent.py", "print('hi')\n")
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: here
            provider: cli
            command: python3 {EVAL_DIR}/agent.py --out {OUTPUT_FILE}
          - name: gone
            provider: cli
            command: python3 {EVAL_DIR}/gone.py {PROMPT_FILE}
          - name: later
            provider: cli
            command: "{WORKSPACE}/run.sh {PROMPT}"
        """,
    )
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            execution: {targets: [here, gone, later]}
            tests: [{id: a, input: hi, assertions: [{type: contains, value: hi}]}]
            """,
        )
    )
    assert list(loaded.unstartable) == ["gone"]
    assert f"script '{project.root}/gone.py' is not found" in only(loaded.warnings).message


def test_graders_are_checked_without_a_targets_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    loaded = load_suite(project.write("s.eval.yaml", grader_suite("[python3, missing.py]")))
    assert loaded.run_issues[0].message.startswith("no targets file")
    assert list(loaded.ungradable) == ["graded"]
