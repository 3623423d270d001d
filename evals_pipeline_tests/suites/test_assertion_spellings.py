"""Assertion spellings as AgentV 4.42.4 reads them: deprecated types, shorthands, includes,
custom types and composite members, each warned about (or refused) at its line."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from evals_pipeline.models.assertions import (
    CodeGraderAssertion,
    CompositeAssertion,
    CustomAssertion,
    LlmGraderAssertion,
    RubricsAssertion,
    ToolTrajectoryAssertion,
)
from evals_pipeline.suites import LoadedSuite, load_suite
from evals_pipeline.suites.includes import MAX_INCLUDE_DEPTH
from evals_pipeline_tests.suites.conftest import Project, only

WITH_JUDGE = """\
targets:
  - name: mock
    provider: mock
    response: hello
  - name: judge
    provider: anthropic
    model: claude-sonnet-4-5
"""


def _load(project: Project, text: str) -> LoadedSuite:
    return load_suite(project.write("s.eval.yaml", text))


def _judged(project: Project, text: str) -> LoadedSuite:
    project.write(".agentv/targets.yaml", WITH_JUDGE)
    return _load(project, "execution: {target: mock}\n" + dedent(text))


def test_positions_follow_the_assertions_after_a_skipped_one(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: code_judge
                  - type: contains
                    valu: hello
            """,
        )
    )
    assert (issue.line, issue.message) == (7, "unknown key 'valu' in tests[0].assertions[0]")


def test_script_is_read_as_command_with_a_warning(project: Project) -> None:
    loaded = _load(
        project,
        "tests: [{id: a, input: hi, assertions: [{type: code_grader, script: [python3, -V]}]}]\n",
    )
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, CodeGraderAssertion)
    assert grader.command == ["python3", "-V"]
    assert only(loaded.warnings).fix == "rename it to 'command'"


def test_rubric_type_becomes_rubrics(project: Project) -> None:
    loaded = _judged(
        project,
        "tests: [{id: a, input: hi, assertions: [{type: rubric, rubrics: [Polite, Brief]}]}]\n",
    )
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, RubricsAssertion)
    assert [c.outcome for c in grader.criteria] == ["Polite", "Brief"]
    assert only(loaded.warnings).message == "assertion type 'rubric' is deprecated"


def test_plain_sentences_become_one_rubrics_grader_weighted_by_their_count(
    project: Project,
) -> None:
    loaded = _judged(
        project,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - type: contains
                value: hello
              - The answer is polite
              - type: is-json
              - "  The answer is brief  "
        """,
    )
    graders = loaded.suite.tests[0].assertions
    assert [g.type for g in graders] == ["contains", "rubrics", "is-json"]
    rubrics = graders[1]
    assert isinstance(rubrics, RubricsAssertion)
    assert [c.outcome for c in rubrics.criteria] == ["The answer is polite", "The answer is brief"]
    assert rubrics.weight == 2
    assert only(loaded.warnings).line == 8


def test_inline_assert_runs_as_an_llm_grader(project: Project) -> None:
    loaded = _judged(project, "tests: [{id: a, input: hi, assertions: [{type: inline-assert}]}]\n")
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, LlmGraderAssertion)
    assert grader.display_name() == "inline-assert"
    assert "exists only in AgentV's SDK" in only(loaded.warnings).message


def test_camel_case_trajectory_keys_and_ignored_expected_input(project: Project) -> None:
    loaded = _load(
        project,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - type: tool_trajectory
                mode: in_order
                argsMatch: superset
                expected:
                  - {tool: Read, maxDurationMs: 50, input: {file_path: a.txt}}
        """,
    )
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, ToolTrajectoryAssertion)
    assert (grader.args_match, grader.expected[0].max_duration_ms) == ("superset", 50)
    messages = sorted(w.message for w in loaded.warnings)
    assert messages == [
        "'argsMatch' is deprecated",
        "'maxDurationMs' is deprecated",
        "expected[].input is not checked: AgentV 4.42.4 ignores it",
    ]


def test_composite_members_are_recursive_and_their_own_weights_ignored(project: Project) -> None:
    loaded = _load(
        project,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - name: outer
                type: composite
                aggregator: {type: weighted_average, weights: {inner: 2}}
                evaluators:
                  - name: inner
                    type: composite
                    aggregator: {type: threshold, threshold: 0.5}
                    assertions:
                      - {name: hello, type: contains, value: hello, weight: 3}
                  - {name: json, type: is-json}
        """,
    )
    outer = loaded.suite.tests[0].assertions[0]
    assert isinstance(outer, CompositeAssertion)
    inner = outer.assertions[0]
    assert isinstance(inner, CompositeAssertion)
    assert inner.assertions[0].weight == 1
    assert sorted(w.line for w in loaded.warnings) == [8, 13]


def test_composite_members_agentv_skips_are_skipped_with_warnings(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - name: outer
                    type: composite
                    aggregator: {type: weighted_average}
                    assertions:
                      - {type: contains, value: hello}
                      - {name: json, type: is_json}
                      - A plain sentence
                      - {name: kept, type: is-json}
            """,
        )
    )
    assert [(w.line, w.message) for w in loaded.warnings] == [
        (9, "a composite member without a name is skipped, as AgentV 4.42.4 skips it"),
        (
            10,
            "composite member type 'is_json' is skipped, as AgentV 4.42.4 skips it (it reads "
            "member types only in kebab-case)",
        ),
        (11, "a plain sentence inside a composite is skipped, as AgentV 4.42.4 skips it"),
    ]
    outer = loaded.suite.tests[0].assertions[0]
    assert isinstance(outer, CompositeAssertion)
    assert [m.name for m in outer.assertions] == ["kept"]


def test_composite_needs_an_aggregator(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: composite, assertions: "
            "[{name: x, type: is-json}]}]}]\n",
        )
    )
    assert issue.message == "missing required key 'aggregator' in tests[0].assertions[0]"


def test_include_splices_templates_by_name_and_path(project: Project) -> None:
    project.write(
        ".agentv/templates/greeting.yaml",
        """\
        assertions:
          - {type: contains, value: hello}
          - include: ./nested/more.yaml
        """,
    )
    project.write(".agentv/templates/nested/more.yaml", "assertions: [{type: is-json}]\n")
    project.write("shared/extra.yaml", "assertions: [{type: equals, value: hello}]\n")
    loaded = _load(
        project,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - include: greeting
              - type: starts-with
                value: h
              - include: ./shared/extra.yaml
        """,
    )
    kinds = [a.type for a in loaded.suite.tests[0].assertions]
    assert kinds == ["contains", "is-json", "starts-with", "equals"]


def test_an_error_in_an_included_assertion_points_at_the_include(project: Project) -> None:
    project.write(".agentv/templates/bad.yaml", "assertions: [{type: contains}]\n")
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: is-json
                  - include: bad
            """,
        )
    )
    assert (issue.line, issue.message) == (
        6,
        "missing required key 'value' in tests[0].assertions[1]",
    )


def test_missing_and_too_deep_templates_are_errors(project: Project) -> None:
    missing = only(
        project.issues(
            "s.eval.yaml", "tests: [{id: a, input: hi, assertions: [{include: nowhere}]}]\n"
        )
    )
    assert missing.message == "assertion template 'nowhere' not found"
    assert ".agentv/templates/nowhere.yaml" in missing.fix
    for depth in range(MAX_INCLUDE_DEPTH + 1):
        project.write(
            f".agentv/templates/t{depth}.yaml", f"assertions: [{{include: t{depth + 1}}}]\n"
        )
    deep = only(
        project.issues("s.eval.yaml", "tests: [{id: a, input: hi, assertions: [{include: t0}]}]\n")
    )
    assert deep.message.startswith(f"assertion templates nest deeper than {MAX_INCLUDE_DEPTH}")


def test_custom_types_are_found_above_the_eval_file(project: Project) -> None:
    grader = project.write(".agentv/assertions/word-count.py", "print('{\"score\": 1}')\n")
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            "tests: [{id: a, input: hi, assertions: [{type: word_count, max_words: 5}]}]\n",
        )
    )
    custom = loaded.suite.tests[0].assertions[0]
    assert isinstance(custom, CustomAssertion)
    assert (custom.kind, custom.display_name(), custom.config) == (
        "word-count",
        "word-count",
        {"max_words": 5},
    )
    assert custom.command[1:] == [str(grader)]
    assert Path(custom.command[0]).name.startswith("python")


def test_a_custom_type_without_a_file_is_an_unknown_type(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml", "tests: [{id: a, input: hi, assertions: [{type: word-count}]}]\n"
        )
    )
    assert issue.message.startswith("unknown assertion type 'word-count'")
    assert ".agentv/assertions/word-count.ts" in issue.fix
