"""Resolving suites into cases: input forms, file and image blocks, prompts and expected output."""

from __future__ import annotations

from evals_pipeline_tests.suites.conftest import Project, cases_of, one_case, only


def test_string_input_is_one_user_message(project: Project) -> None:
    case = one_case(project, "tests: [{id: Say Hello, input: Say hello., criteria: Polite.}]\n")
    assert [(m.role, m.content) for m in case.input] == [("user", "Say hello.")]
    assert case.prompt == "Say hello."
    assert (case.case_key, case.test_id, case.criteria) == ("say-hello", "Say Hello", "Polite.")


def test_object_input_is_structured_content(project: Project) -> None:
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input: {task: add, numbers: [1, 2]}
            assertions: []
        """,
    )
    assert [(m.role, m.content) for m in case.input] == [
        ("user", {"task": "add", "numbers": [1, 2]})
    ]
    assert case.prompt == '{\n  "task": "add",\n  "numbers": [\n    1,\n    2\n  ]\n}'


def test_message_list_with_bare_strings_uses_role_markers(project: Project) -> None:
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input:
              - role: system
                content: Be brief.
              - What is 2+2?
              - role: assistant
                content: "4"
              - And 3+3?
            assertions: []
        """,
    )
    assert [m.role for m in case.input] == ["system", "user", "assistant", "user"]
    assert case.prompt == (
        "@[System]:\nBe brief.\n\n@[User]:\nWhat is 2+2?\n\n@[Assistant]:\n4\n\n@[User]:\nAnd 3+3?"
    )


def test_suite_input_is_prepended(project: Project) -> None:
    case = one_case(
        project,
        """\
        input:
          - role: system
            content: You are careful.
        tests: [{id: a, input: Fix the bug., assertions: []}]
        """,
    )
    assert [(m.role, m.content) for m in case.input] == [
        ("system", "You are careful."),
        ("user", "Fix the bug."),
    ]
    assert case.prompt == "@[System]:\nYou are careful.\n\n@[User]:\nFix the bug."


def test_input_files_become_file_blocks_before_the_text(project: Project) -> None:
    spec = project.write("docs/spec.md", "The spec.\n")
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input: Implement the spec.
            input_files: [docs/spec.md]
            assertions: []
        """,
    )
    assert case.input_files == [str(spec)]
    assert len(case.input) == 1
    assert case.input[0].content == [
        {"type": "file", "value": "docs/spec.md", "path": str(spec), "text": "The spec.\n"},
        {"type": "text", "value": "Implement the spec."},
    ]
    assert case.prompt == f'<file: path="{spec}">\n\nImplement the spec.'


def test_suite_input_files_apply_unless_the_test_has_its_own(project: Project) -> None:
    shared = project.write("evals/shared.md", "shared\n")
    own = project.write("evals/own.md", "own\n")
    cases = cases_of(
        project,
        """\
        input_files: [shared.md]
        tests:
          - {id: a, input: one, assertions: []}
          - {id: b, input: two, input_files: [own.md], assertions: []}
        """,
    )
    assert [c.input_files for c in cases] == [[str(shared)], [str(own)]]


def test_file_blocks_in_messages_are_resolved(project: Project) -> None:
    data = project.write("evals/data.csv", "a,b\n")
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input:
              - role: user
                content:
                  - {type: file, value: data.csv}
                  - Summarise it.
            assertions: []
        """,
    )
    assert case.input[0].content == [
        {"type": "file", "value": "data.csv", "path": str(data), "text": "a,b\n"},
        {"type": "text", "value": "Summarise it."},
    ]
    assert case.prompt == f'<file: path="{data}">\n\nSummarise it.'
    assert case.input_files == [str(data)]


def test_file_blocks_anywhere_in_the_input_are_its_input_files_in_order(project: Project) -> None:
    style = project.write("evals/style.md", "style\n")
    data = project.write("evals/data.csv", "a,b\n")
    notes = project.write("evals/my notes.txt", "notes\n")
    cases = cases_of(
        project,
        """\
        input:
          - role: system
            content: [{type: file, value: style.md}, Be brief.]
        tests:
          - id: blocks
            input:
              - {role: user, content: [{type: file, value: data.csv}, Go.]}
              - {role: assistant, content: [{type: file, value: my notes.txt}]}
              - {role: user, content: [{type: file, value: ./data.csv}]}
            assertions: []
          - id: shorthand
            input: Read.
            input_files: [my notes.txt]
            assertions: []
          - id: alone
            execution: {skip_defaults: true}
            input: [{role: user, content: [{type: file, value: data.csv}]}]
            assertions: []
        """,
    )
    # AgentV's collectResolvedInputFilePaths: the suite's blocks first, repeats kept.
    assert [c.input_files for c in cases] == [
        [str(style), str(data), str(notes), str(data)],
        [str(style), str(notes)],
        [str(data)],
    ]


def test_input_files_lead_the_first_user_message_of_a_list(project: Project) -> None:
    spec = project.write("evals/spec.md", "spec\n")
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input_files: [spec.md]
            input:
              - {role: system, content: Be brief.}
              - {role: user, content: Go.}
            assertions: []
        """,
    )
    assert case.input[1].content == [
        {"type": "file", "value": "spec.md", "path": str(spec), "text": "spec\n"},
        {"type": "text", "value": "Go."},
    ]


def test_expected_output_forms(project: Project) -> None:
    cases = cases_of(
        project,
        """\
        tests:
          - {id: a, input: x, expected_output: The answer is 4.}
          - {id: b, input: x, expected_output: {total: 4}}
          - id: c
            input: x
            expected_output:
              - role: assistant
                tool_calls: [{tool: Bash, input: {command: pytest}}]
              - Done.
        """,
    )
    assert [(m.role, m.content) for m in cases[0].expected_output] == [
        ("assistant", "The answer is 4.")
    ]
    assert [(m.role, m.content) for m in cases[1].expected_output] == [("assistant", {"total": 4})]
    third = cases[2].expected_output
    assert [(m.role, m.content) for m in third] == [("assistant", None), ("assistant", "Done.")]
    assert third[0].tool_calls[0].tool == "Bash"
    assert third[0].tool_calls[0].input == {"command": "pytest"}


def test_expected_tool_call_without_tool_is_an_error(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                expected_output:
                  - role: assistant
                    tool_calls:
                      - {name: Bash}
            """,
        )
    )
    assert (issue.line, issue.message) == (7, "a tool call needs 'tool', the tool's name")


def test_image_blocks_carry_path_and_media_type(project: Project) -> None:
    image = project.root / "evals/shot.png"
    image.parent.mkdir(parents=True, exist_ok=True)
    image.write_bytes(b"\x89PNG")
    case = one_case(
        project,
        """\
        tests:
          - id: a
            input:
              - role: user
                content: [{type: image, value: shot.png}, "What is shown?"]
            assertions: []
        """,
    )
    assert case.input[0].content == [
        {"type": "image", "value": "shot.png", "path": str(image), "media_type": "image/png"},
        {"type": "text", "value": "What is shown?"},
    ]
    assert case.prompt == f'<image: path="{image}">\n\nWhat is shown?'
