"""What AgentV 4.42.4 accepts loads here, with a located warning where it ignores or skips
something: a test's `rubrics`, a test without input, a composite of skipped members,
deprecated keys. `validate` exits 0 on them; `validate --strict` exits 2."""

from __future__ import annotations

import pytest

from evals_pipeline.cli import main
from evals_pipeline.models.assertions import LlmGraderAssertion
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, at_line, only

JUDGED_TARGETS = (
    "targets:\n  - {name: mock, provider: mock, response: hi, grader_target: judge}\n"
    "  - {name: judge, provider: openai, model: m}\n"
)

LENIENT_SUITE = """\
execution: {target: mock}
tests:
  - id: typo
    input: hi
    critera: says hi
    assertions: [{type: contains, value: hi}]
  - id: rubrics
    input: hi
    rubrics:
      - Says hi
      - {outcome: Is short, weight: 2}
    assertions: [{type: contains, value: hi}]
  - id: no-input
    criteria: says hi
  - id: composite
    input: hi
    assertions:
      - type: composite
        name: both
        assertions:
          - {name: a, type: code_judge, script: [python3, check.py]}
          - {name: b, type: llm_judge, prompt: Is it good?}
        aggregator: {type: weighted_average}
      - {type: contains, value: hi}
"""


def test_a_test_level_rubrics_runs_as_an_llm_grader_named_rubrics_first(
    project: Project,
) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    loaded = load_suite(project.write("s.eval.yaml", LENIENT_SUITE))
    test = next(t for t in loaded.suite.tests if t.id == "rubrics")
    grader = test.assertions[0]
    assert isinstance(grader, LlmGraderAssertion)
    assert grader.name == "rubrics"
    assert [(r.id, r.outcome, r.weight) for r in grader.rubrics or []] == [
        ("rubric-1", "Says hi", 1.0),
        ("rubric-2", "Is short", 2.0),
    ]
    assert [r.must_pass for r in grader.rubrics or []] == [True, True]
    assert [a.type for a in test.assertions] == ["llm-grader", "contains"]
    warning = at_line(loaded.warnings, 9)
    assert warning.message.startswith("a test's 'rubrics' runs as an llm-grader named 'rubrics'")


def test_a_test_without_input_is_skipped_with_a_warning(project: Project) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    loaded = load_suite(project.write("s.eval.yaml", LENIENT_SUITE))
    assert [t.id for t in loaded.suite.tests] == ["typo", "rubrics", "composite"]
    warning = at_line(loaded.warnings, 13)
    assert (warning.column, warning.message) == (
        5,
        "test 'no-input' has no input: skipped, as AgentV skips it",
    )
    # The tests after the skipped one keep their positions.
    assert at_line(loaded.warnings, 18).message.startswith("composite 'both' is skipped")
    assert [c.test_id for c in resolve_cases(loaded)] == ["typo", "rubrics", "composite"]


def test_a_suite_whose_every_test_lacks_input_cannot_run(project: Project) -> None:
    issues = project.issues("s.eval.yaml", "tests:\n  - id: a\n    criteria: x\n  - id: b\n")
    assert [(i.line, i.message) for i in issues] == [
        (2, "test 'a' has no input: skipped, as AgentV skips it; no test is left to run"),
        (4, "test 'b' has no input: skipped, as AgentV skips it; no test is left to run"),
    ]


def test_a_composite_of_members_agentv_skips_is_skipped_with_a_warning(
    project: Project,
) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    loaded = load_suite(project.write("s.eval.yaml", LENIENT_SUITE))
    test = next(t for t in loaded.suite.tests if t.id == "composite")
    assert [a.type for a in test.assertions] == ["contains"]
    warning = at_line(loaded.warnings, 18)
    assert warning.column == 9
    assert warning.message == (
        "composite 'both' is skipped: AgentV 4.42.4 skips each of its members, so it has none "
        "left and never grades"
    )
    # Each member says why it is skipped, at its own line.
    assert at_line(loaded.warnings, 21).message.startswith("assertion 'a' of type 'code_judge'")
    assert at_line(loaded.warnings, 22).message.startswith("assertion 'b' of type 'llm_judge'")


def test_deprecated_keys_agentv_no_longer_reads_are_dropped_with_a_warning(
    project: Project,
) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            evaluator: llm_grader
            evaluators: [{type: is-json}]
            target: mock
            execution: {target: mock}
            tests:
              - id: a
                input: hi
                evaluator: code_grader
                expected_outcome: says hi
                assertions: [{type: contains, value: hi}]
            """,
        )
    )
    messages = {w.line: w.message for w in loaded.warnings}
    assert messages[1].startswith("'evaluator' is deprecated and ignored")
    assert messages[2].startswith("top-level 'evaluators' is ignored")
    assert messages[3] == "both 'target' and 'execution.target' are set; 'target' is ignored"
    assert messages[8].startswith("'evaluator' is deprecated and ignored")
    assert messages[9] == "'expected_outcome' is deprecated"
    assert loaded.suite.tests[0].criteria == "says hi"
    assert loaded.suite.assertions == []


def _exit_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)  # as the command runs: its settings read once, on `args.settings`
    return code, capsys.readouterr().err


def test_validate_exits_0_with_located_warnings_and_strict_exits_2(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    path = project.write("s.eval.yaml", LENIENT_SUITE)
    code, err = _exit_code(["validate", str(path)], capsys)
    assert code == 0, err
    for line, message in (
        (5, "unknown field 'critera' in tests[0], ignored (did you mean 'criteria'?)"),
        (9, "a test's 'rubrics' runs as an llm-grader named 'rubrics'"),
        (13, "test 'no-input' has no input: skipped"),
        (18, "composite 'both' is skipped"),
    ):
        assert f"warning: {path}:{line}:" in err and message in err, err
    code, err = _exit_code(["validate", "--strict", str(path)], capsys)
    assert code == 2
    assert f"error (--strict): {path}:5:5: unknown field 'critera'" in err
    assert "error (--strict): " + str(path) + ":18:9: composite 'both' is skipped" in err


def test_run_strict_fails_before_running_on_a_warning(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project.write(
        "s.eval.yaml",
        "tests:\n  - id: a\n    input: hi\n    critera: x\n    assertions: [{type: is-json}]\n",
    )
    code, err = _exit_code(["run", "--strict", str(path)], capsys)
    assert code == 2
    assert f"error (--strict): {path}:4:5: unknown field 'critera' in tests[0]" in err
    assert "warning:" not in err


def test_unknown_keys_of_an_llm_grader_go_into_its_config_as_in_agentv(project: Project) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: llm-grader
                    prompt: "Grade {{ output }} for {{ config.audience }}"
                    audience: children
                    tone: warm
                    config: {tone: formal}
                    promt: typo
            """,
        )
    )
    grader = loaded.suite.tests[0].assertions[0]
    assert isinstance(grader, LlmGraderAssertion)
    assert grader.config == {"tone": "formal", "audience": "children", "promt": "typo"}
    # Free keys are AgentV's way to fill config: only the near miss warns.
    warning = only(loaded.warnings)
    assert (warning.line, warning.message) == (
        10,
        "unknown field 'promt' in tests[0].assertions[0], passed in its config "
        "(did you mean 'prompt'?)",
    )


def test_a_test_without_a_grading_spec_of_its_own_is_skipped_as_agentv_skips_it(
    project: Project,
) -> None:
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            execution: {target: mock}
            assertions: [{type: contains, value: hi}]
            tests:
              - {id: suite-only, input: hi}
              - {id: empty-list, input: hi, assertions: []}
              - {id: own, input: hi, criteria: says hi}
              - {id: rubrics-only, input: hi, rubrics: [Says hi]}
              - {id: evaluators-only, input: hi, evaluators: [{type: contains, value: h}]}
              - {id: outcome, input: hi, expected_outcome: says hi}
              - {id: empty-output, input: hi, expected_output: ""}
              - {id: deprecated-assert, input: hi, assert: [{type: contains, value: h}]}
              - {id: empty-criteria, input: hi, criteria: ""}
            """,
        )
    )
    # AgentV's loader counts a test's own criteria (or expected_outcome), expected_output,
    # assertions or assert key (even []) and turns; the suite's assertions, rubrics and
    # evaluators do not make a test complete.
    assert [t.id for t in loaded.suite.tests] == [
        "empty-list",
        "own",
        "outcome",
        "empty-output",
        "deprecated-assert",
    ]
    skipped = [(w.line, w.column, w.message) for w in loaded.warnings if "skipped" in w.message]
    what = "has no criteria, expected_output, assertions or turns of its own: skipped, as AgentV"
    assert skipped == [
        (4, 5, f"test 'suite-only' {what} skips it"),
        (7, 5, f"test 'rubrics-only' {what} skips it"),
        (8, 5, f"test 'evaluators-only' {what} skips it"),
        (12, 5, f"test 'empty-criteria' {what} skips it"),
    ]
    fixes = {w.line: w.fix for w in loaded.warnings}
    assert "assertions: [] runs it with the suite's assertions only" in fixes[4]
    assert fixes[8].startswith("rename evaluators: to assertions:")
    # The suite's assertions are appended to a test's empty list, as AgentV appends them.
    case = next(c for c in resolve_cases(loaded) if c.test_id == "empty-list")
    assert [a.type for a in case.assertions] == ["contains"]


def test_a_suite_whose_every_test_lacks_a_grading_spec_cannot_run(project: Project) -> None:
    text = "assertions: [{type: contains, value: hi}]\ntests:\n  - {id: a, input: hi}\n"
    (issue,) = project.issues("s.eval.yaml", text)
    assert (issue.line, issue.column) == (3, 5)
    assert issue.message == (
        "test 'a' has no criteria, expected_output, assertions or turns of its own: skipped, as "
        "AgentV skips it; no test is left to run"
    )


def test_a_jsonl_eval_file_counts_criteria_expected_output_and_assert_only(
    project: Project,
) -> None:
    rows = [
        '{"id": "crit", "input": "hi", "criteria": "says hi"}',
        '{"id": "assertions-only", "input": "hi", "assertions": [{"type": "is-json"}]}',
        '{"id": "assert-only", "input": "hi", "assert": [{"type": "is-json"}]}',
        '{"id": "turns-only", "input": "hi", "turns": [{"input": "again"}]}',
        '{"id": "expected", "input": "hi", "expected_output": "hello"}',
    ]
    loaded = load_suite(project.write("cases.jsonl", "\n".join(rows) + "\n"))
    assert [t.id for t in loaded.suite.tests] == ["crit", "assert-only", "expected"]
    skipped = [(w.line, w.message) for w in loaded.warnings if "skipped" in w.message]
    assert skipped == [
        (
            2,
            "test 'assertions-only' has no criteria, expected_output or assert: skipped, as "
            "AgentV skips it",
        ),
        (
            4,
            "test 'turns-only' has no criteria, expected_output or assert: skipped, as "
            "AgentV skips it",
        ),
    ]
    # An eval file that takes its tests from a .jsonl file reads them by the YAML rule.
    project.write("inc.jsonl", rows[1] + "\n")
    loaded = load_suite(project.write("s.eval.yaml", "tests: ./inc.jsonl\n"))
    assert [t.id for t in loaded.suite.tests] == ["assertions-only"]


def test_a_skipped_test_with_a_misspelt_key_says_which_to_rename(project: Project) -> None:
    text = "tests:\n  - {id: a, input: hi, critera: says hi}\n  - {id: b, inptu: hi, criteria: x}\n"
    issues = project.issues("s.eval.yaml", text)
    assert [(i.line, i.fix) for i in issues] == [
        (2, "rename 'critera' to 'criteria'"),
        (3, "rename 'inptu' to 'input'"),
    ]


def test_empty_assertions_read_as_none_with_a_warning(project: Project) -> None:
    # AgentV warns "'assertions' must be an array" and runs the test on the suite's graders.
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            execution: {target: mock}
            targets: [{name: mock, provider: mock, response: hi}]
            assertions: [{type: contains, value: hi}]
            tests:
              - id: a
                input: hi
                assertions:
            """,
        )
    )
    warning = only(loaded.warnings)
    assert warning.line == 7
    assert warning.message == "'assertions' is empty: no graders here, as AgentV 4.42.4 reads it"
    case = only(resolve_cases(loaded))
    assert [a.kind for a in case.assertions] == ["contains"]
