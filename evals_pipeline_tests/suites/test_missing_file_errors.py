"""Referenced files and folders that do not exist are reported with where they were looked for.

Covers input files, file blocks, workspace templates and replay sessions; grader scripts are
checked when they run, as in AgentV. A missing input file is an error only where `agentv
validate` 4.42.4 rejects it (a file block in the input or expected_output message list of a test
written in the eval file); anywhere else it is a warning and the case is built without it, as
AgentV's loader leaves it out.
"""

from __future__ import annotations

from evals_pipeline.suites import LoadedSuite, SuiteIssue, load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only

LEFT_OUT = "not found: it is left out, as AgentV leaves it out"


def left_out(loaded: LoadedSuite) -> list[SuiteIssue]:
    """The suite's warnings about missing input files (not those about its graders)."""
    return [w for w in loaded.warnings if w.message.endswith(LEFT_OUT)]


def test_a_missing_input_file_is_left_out_with_a_warning(project: Project) -> None:
    project.write("evals/notes.md", "notes\n")
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                input_files:
                  - docs/spec.md
                  - notes.md
                assertions: []
            """,
        )
    )
    warning = only(left_out(loaded))
    assert warning.file == str(project.root / "evals/s.eval.yaml")
    assert (warning.line, warning.column) == (5, 9)
    assert warning.message == f"input file 'docs/spec.md' {LEFT_OUT}"
    assert warning.fix == (
        f"looked in {project.root / 'evals'} and its parents up to {project.root}; correct the "
        "path (relative to the eval file's folder) or create the file"
    )
    (case,) = resolve_cases(loaded)
    assert case.input_files == [str(project.root / "evals/notes.md")]  # {FILES} too
    assert "spec.md" not in case.prompt
    assert "notes.md" in case.prompt


def test_when_every_input_file_is_missing_the_text_is_still_a_block(project: Project) -> None:
    # AgentV expands input_files with a string input into blocks before dropping the missing.
    loaded = load_suite(
        project.write(
            "s.eval.yaml", "tests: [{id: a, input: hi, input_files: [gone.md], assertions: []}]\n"
        )
    )
    assert only(left_out(loaded)).message == f"input file 'gone.md' {LEFT_OUT}"
    (case,) = resolve_cases(loaded)
    assert case.input_files == []
    assert [m.content for m in case.input] == [[{"type": "text", "value": "hi"}]]
    assert case.prompt.strip() == "hi"


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
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            f"tests: [{{id: a, input: hi, input_files: [{outside}], assertions: []}}]\n",
        )
    )
    warning = only(left_out(loaded))
    assert warning.message == f"input file '{outside}' {LEFT_OUT}"
    assert warning.fix.startswith(f"looked in {project.root};")


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


def test_missing_file_block_in_a_tests_expected_output(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                expected_output:
                  - role: assistant
                    content:
                      - {type: file, value: answers/a.md}
            """,
        )
    )
    assert (issue.line, issue.column) == (7, 33)
    assert issue.message == "file block 'answers/a.md' not found"


def test_missing_suite_input_file_block_is_left_out_with_a_warning(project: Project) -> None:
    # AgentV's corpus does this (evals/agentv-dev/skills/skill-invocation.eval.yaml).
    project.write("style.md", "Be brief.\n")
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            input:
              - role: system
                content:
                  - type: file
                    value: /plugins/x/SKILL.md
                  - {type: file, value: style.md}
            tests: [{id: a, input: hi, criteria: says hi}]
            """,
        )
    )
    warning = only(left_out(loaded))
    assert (warning.line, warning.column) == (5, 16)
    assert warning.message == f"file block '/plugins/x/SKILL.md' {LEFT_OUT}"
    assert warning.fix.startswith(f"looked in {project.root};")
    (case,) = resolve_cases(loaded)
    assert case.input_files == [str(project.root / "style.md")]
    assert [b["value"] for b in case.input[0].content] == ["style.md"]  # type: ignore[index, union-attr]
    assert "SKILL.md" not in case.prompt


def test_missing_image_block_is_left_out_with_a_warning(project: Project) -> None:
    # agentv validate checks only file blocks; its loader drops a missing image.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                criteria: describes it
                input:
                  - role: user
                    content:
                      - {type: image, value: pics/cat.png}
                      - Describe it.
            """,
        )
    )
    warning = only(left_out(loaded))
    assert (warning.line, warning.column) == (7, 34)
    assert warning.message == f"image block 'pics/cat.png' {LEFT_OUT}"
    (case,) = resolve_cases(loaded)
    assert case.input[0].content == [{"type": "text", "value": "Describe it."}]


def test_missing_file_block_in_one_message_written_as_an_object_is_a_warning(
    project: Project,
) -> None:
    # agentv validate checks only message lists; an object input is read as one message.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                criteria: reads it
                input:
                  role: user
                  content: [{type: file, value: gone.md}, Read it.]
            """,
        )
    )
    warning = only(left_out(loaded))
    assert (warning.line, warning.message) == (6, f"file block 'gone.md' {LEFT_OUT}")
    (case,) = resolve_cases(loaded)
    assert case.input[0].content == [{"type": "text", "value": "Read it."}]


def test_missing_file_blocks_in_tests_from_other_files_are_warnings(project: Project) -> None:
    # agentv validate reads only the eval file's own tests, not file:// entries nor tests: path.
    project.write("report.txt", "report\n")
    block = """\
        - id: {id}
          criteria: reads it
          input:
            - role: user
              content:
                - {{type: file, value: gone.txt}}
                - {{type: file, value: report.txt}}
          expected_output:
            - role: assistant
              content: [{{type: file, value: expected.md}}, Done.]
        """
    project.write("more.yaml", block.format(id="spliced"))
    project.write("cases.yaml", block.format(id="listed"))
    spliced = load_suite(project.write("a.eval.yaml", "tests: [file://more.yaml]\n"))
    listed = load_suite(project.write("b.eval.yaml", "tests: ./cases.yaml\n"))
    for loaded, name in ((spliced, "more.yaml"), (listed, "cases.yaml")):
        where = [(w.file, w.line, w.column, w.message) for w in left_out(loaded)]
        assert where == [
            (str(project.root / name), 6, 31, f"file block 'gone.txt' {LEFT_OUT}"),
            (str(project.root / name), 10, 37, f"file block 'expected.md' {LEFT_OUT}"),
        ]
        (case,) = resolve_cases(loaded)
        assert case.input_files == [str(project.root / "report.txt")]
        assert "gone.txt" not in case.prompt
        assert case.expected_output[0].content == [{"type": "text", "value": "Done."}]


def test_a_file_block_missing_from_a_suite_and_a_test_reports_only_the_tests(
    project: Project,
) -> None:
    # The test's own message list is rejected; the suite's input only warns, as in AgentV.
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            input:
              - role: user
                content: [{type: file, value: gone.md}]
            tests:
              - id: a
                input:
                  - role: user
                    content: [{type: file, value: gone.md}]
                assertions: []
            """,
        )
    )
    assert (issue.line, issue.message) == (8, "file block 'gone.md' not found")


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
