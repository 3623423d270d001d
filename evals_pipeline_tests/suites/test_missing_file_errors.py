"""Referenced files and folders that do not exist are reported with where they were looked for.

Covers input files, file blocks, workspace templates, grader scripts and replay sessions.
"""

from __future__ import annotations

from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, at_line, only


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
