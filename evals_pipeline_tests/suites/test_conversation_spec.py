"""`mode: conversation` as authored: AgentV's cross-field rules and turn assertions."""

from __future__ import annotations

from evals_pipeline.models.assertions import LlmGraderAssertion, TextAssertion
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only


def test_turns_resolve_with_string_assertions_as_one_rubric_grader(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: mock, provider: mock, response: hi, grader_target: judge}\n"
        "  - {name: judge, provider: openai, model: m}\n",
    )
    suite = project.write(
        "s.eval.yaml",
        """\
        execution: {target: mock}
        tests:
          - id: c
            mode: conversation
            aggregation: min
            window_size: 2
            input: Hello.
            turns:
              - input: First
                assertions: [Is polite, {type: contains, value: hi}, Is short]
              - input: {ask: structured}
                expected_output: hi
        """,
    )
    [case] = resolve_cases(load_suite(suite))
    assert case.conversation is not None
    first, second = case.conversation.turns
    assert (case.conversation.aggregation, case.conversation.window_size) == ("min", 2)
    assert isinstance(first.assertions[0], TextAssertion)
    rubric = first.assertions[1]
    assert isinstance(rubric, LlmGraderAssertion) and rubric.name == "turn-rubrics"
    assert [(r.id, r.outcome, r.required) for r in rubric.rubrics] == [
        ("criterion-1", "Is polite", False),
        ("criterion-2", "Is short", False),
    ]
    # A structured turn input is sent as compact JSON; an expected output with no assertions
    # gets the implicit llm-grader, like a test.
    assert second.input == '{"ask":"structured"}'
    assert [type(a) for a in second.assertions] == [LlmGraderAssertion]
    assert case.assertions == []  # no implicit grader over the whole conversation
    assert "judge" in case.llm_targets


def test_turns_need_mode_conversation(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", "tests: [{id: c, input: x, turns: [{input: a}]}]\n"))
    assert "'turns' requires mode: conversation" in issue.message


def test_conversation_mode_needs_turns_and_no_top_level_expected_output(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml", "tests: [{id: c, input: x, mode: conversation, assertions: []}]\n"
        )
    )
    assert "requires a non-empty 'turns' list" in issue.message
    issue = only(
        project.issues(
            "s.eval.yaml",
            "tests: [{id: c, input: x, mode: conversation, expected_output: y, "
            "turns: [{input: a}]}]\n",
        )
    )
    assert "expected_output' is not allowed with mode: conversation" in issue.message


def test_a_turn_criterion_needs_a_grader_target(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: c
                mode: conversation
                input: x
                turns:
                  - input: a
                    assertions: [Is polite]
            """,
        )
    )
    issue = only([w for w in loaded.warnings if "cannot be graded" in w.message])
    assert "'turn-rubrics' has no grader target" in issue.message
    assert issue.line == 7  # the assertions of the turn
    assert "'turn-rubrics' has no grader target" in loaded.ungradable["c"]
