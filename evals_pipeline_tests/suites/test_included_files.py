"""Tests and workspaces kept in other files, as AgentV reads them; errors point into those files."""

from __future__ import annotations

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only


def test_tests_from_a_jsonl_file(project: Project) -> None:
    project.write(
        "evals/cases.jsonl",
        '{"id": "a", "input": "hi", "criteria": "greets"}\n\n'
        '{"id": "b", "input": "{{w}}", "vars": {"w": "yo"}, "criteria": "greets"}\n',
    )
    loaded = load_suite(project.write("evals/s.eval.yaml", "eval_cases: ./cases.jsonl\n"))
    cases = resolve_cases(loaded)
    assert [(c.test_id, c.prompt) for c in cases] == [("a", "hi"), ("b", "yo")]
    assert "'eval_cases' is deprecated" in [w.message for w in loaded.warnings]


def test_a_near_miss_in_a_jsonl_test_warns_at_its_line_and_column(project: Project) -> None:
    jsonl = project.write(
        "evals/cases.jsonl",
        '{"id": "a", "input": "hi", "critera": "x", "assertions": [{"type": "is-json"}]}\n{"id": "b", "input": "yo", "critera": "x", "assertions": [{"type": "is-json"}]}\n',
    )
    loaded = load_suite(project.write("evals/s.eval.yaml", "tests: ./cases.jsonl\n"))
    # Once per file and key, at its first row.
    warning = only(loaded.warnings)
    assert (warning.file, warning.line, warning.column) == (str(jsonl), 1, 28)
    assert warning.message == (
        "unknown field 'critera' in tests[0], ignored (did you mean 'criteria'?)"
    )


def test_free_form_keys_of_dataset_rows_are_ignored_quietly(project: Project) -> None:
    project.write(
        "evals/cases.jsonl",
        '{"id": "a", "input": "hi", "assertions": [{"type": "is-json"}], "source": "wiki", "difficulty": 3}\n',
    )
    project.write(
        "evals/more.yaml", "- {id: b, input: yo, assertions: [{type: is-json}], topic: greetings}\n"
    )
    loaded = load_suite(project.write("evals/s.eval.yaml", "tests: ./cases.jsonl\n"))
    assert loaded.warnings == []
    assert [t.id for t in loaded.suite.tests] == ["a"]
    loaded = load_suite(
        project.write(
            "evals/t.eval.yaml",
            "tests: [file://more.yaml, {id: c, input: x, assertions: [{type: is-json}]}]\n",
        )
    )
    assert loaded.warnings == []
    assert [t.id for t in loaded.suite.tests] == ["b", "c"]


def test_malformed_jsonl_is_reported_at_its_line(project: Project) -> None:
    jsonl = project.write(
        "evals/cases.jsonl", '{"id": "a", "input": "hi", "criteria": "x"}\n{"id": \n'
    )
    issue = only(project.issues("evals/s.eval.yaml", "tests: ./cases.jsonl\n"))
    assert (issue.file, issue.line) == (str(jsonl), 2)
    assert issue.message.startswith("malformed JSONL line")


def test_a_missing_tests_file(project: Project) -> None:
    issue = only(project.issues("evals/s.eval.yaml", "name: x\ntests: ./nope.jsonl\n"))
    assert (issue.line, issue.column, issue.message) == (
        2,
        8,
        "tests file './nope.jsonl' not found",
    )
    assert str(project.root / "evals/nope.jsonl") in issue.fix


def test_a_folder_of_cases(project: Project) -> None:
    project.write("evals/cases/b-second/case.yaml", "input: two\ncriteria: says two\n")
    project.write("evals/cases/a-first/case.yaml", "id: renamed\ninput: one\ncriteria: says one\n")
    project.write("evals/cases/a-first/workspace/seed.txt", "x")
    project.write("evals/cases/no-case/readme.txt", "skipped")
    cases = resolve_cases(load_suite(project.write("evals/s.eval.yaml", "tests: cases\n")))
    assert [(c.test_id, c.prompt) for c in cases] == [("renamed", "one"), ("b-second", "two")]
    assert cases[0].workspace_template == str(project.root / "evals/cases/a-first/workspace")
    assert cases[1].workspace is None


def test_an_error_in_a_case_file_names_that_file(project: Project) -> None:
    case = project.write("evals/cases/a/case.yaml", "input: one\ncriteria: 2\n")
    issue = only(project.issues("evals/s.eval.yaml", "tests: cases\n"))
    assert (issue.file, issue.line) == (str(case), 2)
    assert issue.message.startswith("tests[0].criteria must be a string")


def test_file_references_among_inline_tests(project: Project) -> None:
    project.write("evals/more/x.yaml", "- {id: x, input: from x, criteria: x}\n")
    project.write("evals/more/y.yaml", "- {id: y, input: from y, criteria: y}\n")
    text = """\
    tests:
      - {id: first, input: inline, criteria: ok}
      - file://more/*.yaml
      - {id: last, input: inline too, expected_output: ok, criteria: [typo]}
    """
    issue = only(project.issues("evals/s.eval.yaml", text))
    # The inline test after the spliced ones keeps its own position.
    assert (issue.line, issue.message[:29]) == (4, "tests[3].criteria must be a s")
    project.write("evals/s.eval.yaml", text.replace(", criteria: [typo]", ""))
    cases = resolve_cases(load_suite(project.root / "evals/s.eval.yaml"))
    assert [c.test_id for c in cases] == ["first", "x", "y", "last"]


def test_a_workspace_file(project: Project) -> None:
    project.write("evals/ws/template/README.md", "x")
    project.write(
        "evals/ws/workspace.yaml",
        """\
        template: ./template
        hooks:
          before_each: {command: [echo, hi]}
          after_each: {command: [echo, bye], cwd: ..}
        """,
    )
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                "workspace: ws/workspace.yaml\ntests: [{id: a, input: hi, assertions: []}]\n",
            )
        )
    )
    assert case.workspace is not None
    assert case.workspace.template == str(project.root / "evals/ws/template")
    hooks = case.workspace.hooks
    assert hooks.before_each is not None and hooks.after_each is not None
    # A workspace file's hooks run in its folder; their cwd resolves from there.
    assert hooks.before_each.cwd == str(project.root / "evals/ws")
    assert hooks.after_each.cwd == str(project.root / "evals")


def test_a_workspace_file_with_a_wrapper_is_refused(project: Project) -> None:
    ws = project.write("evals/ws.yaml", "workspace:\n  template: .\n")
    issue = only(
        project.issues(
            "evals/s.eval.yaml", "workspace: ws.yaml\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    assert (issue.file, issue.message) == (
        str(ws),
        "the workspace file has a top-level 'workspace:' wrapper",
    )


def test_an_error_in_a_workspace_file_points_into_it(project: Project) -> None:
    ws = project.write("evals/ws.yaml", "template: .\nisolation: sometimes\n")
    issue = only(
        project.issues(
            "evals/s.eval.yaml", "workspace: ws.yaml\ntests: [{id: a, input: hi, assertions: []}]\n"
        )
    )
    assert (issue.file, issue.line, issue.column) == (str(ws), 2, 12)


def test_a_jsonl_file_run_as_a_suite_with_its_sidecar(project: Project) -> None:
    project.write(
        "evals/cases.jsonl",
        '{"id": "a", "input": "hi", "criteria": "greets"}\n'
        '{"id": "b", "input": "yo", "criteria": "greets"}\n',
    )
    project.write(
        "evals/cases.yaml",
        """\
        name: side-car
        description: read by AgentV
        execution:
          target: mock
          assertions: [{type: contains, value: h}]
        """,
    )
    loaded = load_suite(project.root / "evals/cases.jsonl")
    assert loaded.slug == "side_car"
    cases = resolve_cases(loaded)
    assert [(c.test_id, c.agent, len(c.assertions)) for c in cases] == [
        ("a", "mock", 1),
        ("b", "mock", 1),
    ]
    bare = project.write("other/plain.jsonl", '{"id": "c", "input": "x", "expected_output": "x"}\n')
    assert [c.test_id for c in resolve_cases(load_suite(bare))] == ["c"]
