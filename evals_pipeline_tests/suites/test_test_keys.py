"""AgentV's test keys: vars, metadata inheritance, dependencies, per-test execution and
workspace merging."""

from __future__ import annotations

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.template_vars import fill
from evals_pipeline_tests.suites.conftest import Project, only


def test_fill_keeps_types_for_whole_placeholders_and_unknowns_as_written() -> None:
    values = {"n": 3, "user": {"name": "Ada", "tags": ["a", "b"]}, "ok": True}
    assert fill("{{n}}", values) == 3
    assert fill("{{ user.tags }}", values) == ["a", "b"]
    assert fill("n={{n}} {{user.name}} {{user.tags}} {{ok}} {{nope}} {{user.nope}}", values) == (
        'n=3 Ada ["a","b"] true {{nope}} {{user.nope}}'
    )
    assert fill({"k": ["{{n}}", {"x": "{{user.name}}"}]}, values) == {"k": [3, {"x": "Ada"}]}


def test_vars_fill_the_test_and_the_suite_input(project: Project) -> None:
    project.write("evals/data/a.csv", "1,2\n")
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                input: "Topic: {{topic}}"
                tests:
                  - id: a
                    vars: {topic: sums, file: data/a.csv, answer: {total: 3}}
                    input: Add the numbers in {{file}}.
                    input_files: ["{{file}}"]
                    criteria: The total is {{answer.total}}
                    expected_output: "{{answer}}"
                """,
            )
        )
    )
    assert case.prompt.startswith("@[User]:\nTopic: sums")
    assert case.input_files == [str(project.root / "evals/data/a.csv")]
    assert case.criteria == "The total is 3"
    assert [m.content for m in case.expected_output] == [{"total": 3}]


def test_suite_metadata_is_inherited(project: Project) -> None:
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                metadata: {tags: [a, b], owner: suite, nested: {x: 1, y: 1}}
                governance: {risk: low}
                tests:
                  - id: t
                    input: hi
                    metadata: {tags: [b, c], owner: test, nested: {y: 2}}
                    assertions: []
                """,
            )
        )
    )
    assert case.metadata == {
        "tags": ["a", "b", "c"],
        "owner": "test",
        "nested": {"y": 2, "x": 1},
        "governance": {"risk": "low"},
    }


def test_a_test_workspace_merges_field_by_field(project: Project) -> None:
    project.root.joinpath("evals/tpl").mkdir(parents=True)
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                workspace:
                  template: tpl
                  hooks:
                    after_each: {command: [echo, bye], timeout_ms: 5000}
                tests:
                  - id: t
                    input: hi
                    workspace:
                      hooks:
                        after_each: {reset: strict}
                    assertions: []
                """,
            )
        )
    )
    assert case.workspace is not None
    assert case.workspace.template == str(project.root / "evals/tpl")
    after = case.workspace.hooks.after_each
    assert after is not None
    assert (after.command, after.timeout_ms, after.reset) == (["echo", "bye"], 5000, "strict")


def test_execution_targets_of_a_test_pick_among_the_suite_targets(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - {name: one, provider: mock, response: a}
          - {name: two, provider: mock, response: b}
        """,
    )
    cases = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                execution: {targets: [one, two]}
                tests:
                  - {id: both, input: hi, assertions: []}
                  - {id: only-two, input: hi, execution: {targets: [two], workers: 2, cache: true}, assertions: []}
                """,
            )
        )
    )
    assert [(c.test_id, c.agent) for c in cases] == [
        ("both", "one"),
        ("both", "two"),
        ("only-two", "two"),
    ]


def test_dependencies_are_carried_and_checked(project: Project) -> None:
    cases = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                tests:
                  - {id: a, input: hi, assertions: []}
                  - {id: b, input: hi, depends_on: [a], on_dependency_failure: run, assertions: []}
                """,
            )
        )
    )
    assert [(c.depends_on, c.on_dependency_failure) for c in cases] == [
        ([], "skip"),
        (["a"], "run"),
    ]
    issues = project.issues(
        "evals/s.eval.yaml",
        """\
        tests:
          - {id: a, input: hi, depends_on: [c], assertions: []}
          - {id: b, input: hi, depends_on: [b, aa], assertions: []}
          - {id: c, input: hi, depends_on: [a], assertions: []}
        """,
    )
    assert [(i.line, i.message) for i in issues] == [
        (2, "circular dependency: a → c → a"),
        (3, "test 'b' depends on itself"),
        (3, "test 'b' depends on 'aa', which is not a test here"),
    ]
    assert issues[2].fix == "did you mean 'a'?"


def test_an_unknown_on_dependency_failure(project: Project) -> None:
    issue = only(
        project.issues(
            "evals/s.eval.yaml",
            "tests: [{id: a, input: hi, depends_on: [], on_dependency_failure: skipp, assertions: []}]\n",
        )
    )
    assert issue.fix == "did you mean 'skip'?"


def test_suite_execution_keys_are_carried(project: Project) -> None:
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                execution:
                  budgetUsd: 1.5
                  fail_on_error: true
                  cache: true
                  cache_path: .agentv/cache
                  trials: {count: 2, strategy: confidence_interval, costLimitUsd: 0.5}
                requires: {agentv: ">=4.0"}
                tests: [{id: a, input: hi, conversation_id: c1, suite: grouped, assertions: []}]
                """,
            )
        )
    )
    assert (case.budget_usd, case.fail_on_error, case.conversation_id) == (1.5, True, "c1")
    assert (case.trials.strategy, case.trials.cost_limit_usd) == ("confidence_interval", 0.5)
