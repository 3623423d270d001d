"""Referenced files and folders that do not exist are reported with where they were looked for.

Covers input files, file blocks, workspace templates and replay sessions; grader scripts are
checked when they run, as in AgentV.
"""

from __future__ import annotations

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only


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
                assertions: []
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
            "tests: [{id: a, input: hi, input_files: [docs/spec.md], assertions: []}]\n",
        )
    )
    assert loaded.suite.tests[0].input_files == ["docs/spec.md"]


def test_input_file_search_stops_at_the_repo_root(project: Project) -> None:
    outside = f"{project.root.name}-outside.md"  # unique: the parent folder is shared
    (project.root.parent / outside).write_text("x")
    issue = only(
        project.issues(
            "s.eval.yaml",
            f"tests: [{{id: a, input: hi, input_files: [{outside}], assertions: []}}]\n",
        )
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
                assertions: []
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
            tests: [{id: a, input: hi, assertions: []}]
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
                assertions: []
            """,
        )
    )
    assert (issue.line, issue.message) == (4, "workspace template folder 'repo' not found")


def test_a_missing_grader_script_is_not_a_load_error(project: Project) -> None:
    # As in AgentV: the grader fails when it runs, as that case's error with its stderr.
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: code-grader
                    command: [python3, graders/check.py]
            """,
        )
    )
    (case,) = resolve_cases(loaded)
    assert case.assertions[0].model_dump()["cwd"] == str(project.root / "evals")


def test_a_grader_cwd_is_searched_for_as_agentv_does(project: Project) -> None:
    # `cwd: tools` is not in evals/, but in its parent: AgentV's search roots find it there.
    project.write("tools/check.py", "print(1)\n")
    loaded = load_suite(
        project.write(
            "evals/deep/s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - {type: code-grader, command: [python3, check.py], cwd: tools}
                  - {type: code-grader, command: [python3, check.py], cwd: nowhere}
            """,
        )
    )
    (case,) = resolve_cases(loaded)
    cwds = [a.model_dump()["cwd"] for a in case.assertions]
    # Found nowhere: taken as written, from the working folder (then the grader fails to start).
    assert cwds == [str(project.root / "tools"), str(project.root / "nowhere")]


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
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n"))
    assert issue.file == str(targets)
    assert (issue.line, issue.column) == (4, 19)
    assert issue.message == "replay sessions folder 'recordings/run-1' not found"
    assert issue.fix == (
        f"looked for {project.root / 'recordings/run-1'}; create it or correct the path "
        f"(relative to the project folder, {project.root})"
    )
