"""`validate` and `run` on where targets come from and on what will certainly fail, as real
subprocesses: no targets file (validate warns, run fails naming every folder looked in),
`run --targets`, a target key AgentV ignores, and the run-time failures validate names (a
grader that cannot start makes its case an error without running its agent)."""

from __future__ import annotations

import os
from pathlib import Path

from evals_pipeline_tests.test_cli import cli, failure_lines, table_rows, write

GRADED_SUITE = """\
execution:
  targets: [agent, ghost]
tests:
  - id: graded
    input: hi
    assertions:
      - type: code-grader
        command: [python3, graders/missing.py]
  - id: fine
    input: hi
    assertions:
      - type: contains
        value: hello
  - id: uses-a-variable
    input: ${{ EVALS_TEST_UNSET_VARIABLE }}
    assertions:
      - type: contains
        value: hello
"""


def test_no_targets_file_validates_with_a_warning_and_run_names_where_it_looked(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    suite = write(project / "evals", "s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    (project / ".git").mkdir()
    (project / "evals" / ".git").rmdir()  # the project's root bounds the search
    places = f"{project / 'evals'}, {project}"
    done = cli("validate", str(suite), home=tmp_path, cwd=project)
    assert done.code == 0, done.explain()
    assert f"warning: when run: {suite}:1:1: no targets file: looked for targets.yaml, " in (
        done.stderr
    )
    assert f".agentv/targets.yml in {places}\n" in done.stderr, done.explain()
    done = cli("run", str(suite), home=tmp_path, cwd=project)
    assert done.code == 2, done.explain()
    assert f"{suite}:1:1: no targets file: looked for " in done.stderr
    assert f"in {places}\n" in done.stderr, done.explain()


def test_run_with_a_targets_file_chosen_and_a_key_agentv_ignores(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "evals",
        "s.eval.yaml",
        "tests: [{id: a, input: hi, assertions: [{type: contains, value: hello}]}]\n",
    )
    chosen = tmp_path / "conf" / "agents.yaml"
    chosen.parent.mkdir()
    chosen.write_text(
        "targets:\n"
        "  - name: echoer\n"
        "    provider: cli\n"
        "    command: echo hello > {OUTPUT_FILE}\n"
        "    timeout_ms: 5000\n"
    )
    done = cli("run", str(suite), "--targets", "nowhere.yaml", home=tmp_path)
    assert done.code == 2 and "--targets: no targets file at " in done.stderr, done.explain()
    done = cli("run", str(suite), "--targets", str(chosen), home=tmp_path)
    assert done.code == 0, done.explain()
    assert f"warning: {chosen}:5:5: unknown field 'timeout_ms' in targets[0], ignored" in (
        done.stderr
    )
    assert table_rows(done.stdout)["echoer"]["passed"] == "1", done.explain()


def test_validate_names_what_will_fail_and_run_skips_the_agent_of_an_ungradable_case(
    tmp_path: Path,
) -> None:
    env_var = "EVALS_TEST_UNSET_VARIABLE"
    assert env_var not in os.environ
    suite = write(tmp_path / "evals", "s.eval.yaml", GRADED_SUITE)
    targets = write(
        tmp_path / "evals" / ".agentv",
        "targets.yaml",
        """\
        targets:
          - name: agent
            provider: cli
            command: touch ran-{EVAL_ID} && echo hello > {OUTPUT_FILE}
            sandbox: false  # it marks what ran in the eval's folder, read-only in the sandbox
          - name: lost
            provider: cli
            command: no-such-agent-xyz {PROMPT}
        """,
    )
    done = cli("validate", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    expected = [
        f"{suite}:2:20: target 'ghost' is not defined",
        f"{suite}:8:18: code-grader 'code-grader' cannot start: script 'graders/missing.py' is "
        "not found",
        f"{suite}:15:12: ${{{{ {env_var} }}}} is not set",
    ]
    for prefix in expected:
        assert any(prefix in line for line in warnings), f"{prefix}\n{done.explain()}"

    # The undefined target stops the run as in AgentV; without it the other cases run.
    suite.write_text(GRADED_SUITE.replace("[agent, ghost]", "[agent]"))
    targets.write_text(targets.read_text().replace("no-such-agent-xyz", "true"))
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert f"{suite}:8:18: code-grader 'code-grader' cannot start" in done.stderr
    assert not (tmp_path / "evals" / "ran-graded").exists(), "the ungradable case's agent ran"
    assert (tmp_path / "evals" / "ran-fine").exists(), done.explain()
    failures = failure_lines(done.stdout)
    graded = [line for line in failures if line.startswith("agent / graded: ")]
    assert graded and f"cannot be graded: {suite}:8:18: code-grader" in graded[0], done.explain()
    assert table_rows(done.stdout)["agent"]["errors"] == "1", done.explain()


def test_validate_warns_when_an_agent_command_is_not_on_path(tmp_path: Path) -> None:
    suite = write(
        tmp_path,
        "s.eval.yaml",
        "tests: [{id: a, input: hi, assertions: [{type: contains, value: hello}]}]\n",
    )
    targets = write(
        tmp_path / ".agentv",
        "targets.yaml",
        "targets: [{name: lost, provider: cli, command: 'no-such-agent-xyz {PROMPT}'}]\n",
    )
    done = cli("validate", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert (
        f"warning: {targets}:1:48: the command of target 'lost' cannot start: "
        "'no-such-agent-xyz' is not found on PATH"
    ) in done.stderr, done.explain()
