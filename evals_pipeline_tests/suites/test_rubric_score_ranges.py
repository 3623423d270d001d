"""Analytic criteria (`score_ranges`), rubric `operator` and `max_steps`, as AgentV 4.42.4 loads
them: the shorthand map, the band rules, and where a bad value is reported."""

from __future__ import annotations

import pytest

from evals_pipeline.models.assertions import RubricsAssertion
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only

JUDGED_TARGETS = (
    "targets:\n  - {name: mock, provider: mock, response: hi, grader_target: judge}\n"
    "  - {name: judge, provider: openai, model: m}\n"
)


@pytest.fixture
def judged(project: Project) -> Project:
    """The project with an LLM grader target, so rubric suites load."""
    project.write(".agentv/targets.yaml", JUDGED_TARGETS)
    return project


def criterion_suite(criterion: str) -> str:
    return (
        "tests:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    assertions:\n"
        "      - type: rubrics\n"
        "        criteria:\n"
        f"          - {criterion}\n"
    )


def test_shorthand_map_becomes_bands_up_to_the_next_bound(judged: Project) -> None:
    loaded = load_suite(
        judged.write(
            "s.eval.yaml",
            criterion_suite("{id: tone, score_ranges: {0: Rude, 4: Neutral, 8: Friendly}}"),
        )
    )
    spec = loaded.suite.tests[0].assertions[0]
    assert isinstance(spec, RubricsAssertion)
    item = spec.criteria[0]
    assert [(r.score_range, r.outcome) for r in item.score_ranges or []] == [
        ((0, 3), "Rude"),
        ((4, 7), "Neutral"),
        ((8, 10), "Friendly"),
    ]
    assert item.outcome is None  # optional with bands, as in AgentV
    assert item.score_gate is None  # not required unless it says so


@pytest.mark.parametrize(
    ("criterion", "gate"),
    [
        ("{id: c, required: true, score_ranges: {0: Bad}}", 1.0),
        ("{id: c, min_score: 0.6, score_ranges: {0: Bad}}", 0.6),
        ("{id: c, required: false, score_ranges: {0: Bad}}", None),
        ("{id: c, outcome: Polite}", 1.0),  # a checklist criterion is required by default
        ("{id: c, outcome: Polite, required: false}", None),
    ],
)
def test_score_gate_follows_agentv(judged: Project, criterion: str, gate: float | None) -> None:
    loaded = load_suite(judged.write("s.eval.yaml", criterion_suite(criterion)))
    spec = loaded.suite.tests[0].assertions[0]
    assert isinstance(spec, RubricsAssertion)
    assert spec.criteria[0].score_gate == gate


@pytest.mark.parametrize(
    ("criterion", "message"),
    [
        (
            "{id: c, score_ranges: [{score_range: [0, 5], outcome: Low}, "
            "{score_range: [5, 10], outcome: High}]}",
            "score_ranges [0, 5] and [5, 10] overlap: make each score belong to one band",
        ),
        (
            "{id: c, score_ranges: [{score_range: [0, 5], outcome: Low}]}",
            "score_ranges miss the scores 6, 7, 8, 9, 10: the bands must cover every integer 0..10",
        ),
        ("{id: c, score_ranges: []}", "score_ranges miss the scores 0, 1, 2"),
        (
            "{id: c, score_ranges: {3: OK, 7: Good}}",
            "score_ranges shorthand map must start at 0 (got 3): add 0: <outcome>",
        ),
        (
            "{id: c, score_ranges: [{score_range: [6, 2], outcome: X}]}",
            "min must be <= max; write [2, 6]",
        ),
        ("{id: c}", "criterion 'c' has no outcome: add outcome: <what must be true>"),
    ],
)
def test_bad_bands_are_errors_at_the_criterion(
    project: Project, criterion: str, message: str
) -> None:
    issue = only(project.issues("s.eval.yaml", criterion_suite(criterion)))
    assert issue.line == 7
    assert message in issue.message


def test_a_band_score_out_of_range_is_an_error_at_it(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            criterion_suite("{id: c, score_ranges: [{score_range: [0, 11], outcome: All}]}"),
        )
    )
    assert issue.line == 7
    assert "score_ranges[0].score_range[1]" in issue.message
    assert "10" in issue.message


def test_an_unknown_operator_is_an_error_naming_the_valid_ones(project: Project) -> None:
    issue = only(
        project.issues("s.eval.yaml", criterion_suite("{id: c, outcome: X, operator: nice}"))
    )
    assert issue.line == 7
    assert "'correctness'" in issue.message and "'contradiction'" in issue.message


def test_max_steps_loads_with_a_warning_that_it_has_no_effect(judged: Project) -> None:
    loaded = load_suite(
        judged.write(
            "s.eval.yaml",
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: llm-grader
                    maxSteps: 5
                  - type: rubrics
                    criteria: [Polite]
                    max_steps: 3
            """,
        )
    )
    assert [a.max_steps for a in loaded.suite.tests[0].assertions] == [5, 3]  # type: ignore[union-attr]
    lines = sorted(w.line for w in loaded.warnings if "max_steps has no effect" in w.message)
    assert lines == [6, 9]


@pytest.mark.parametrize("value", ["0", "51", "2.5"])
def test_max_steps_outside_agentv_range_is_an_error(project: Project, value: str) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            f"tests: [{{id: a, input: hi, assertions: [{{type: llm-grader, max_steps: {value}}}]}}]\n",
        )
    )
    assert "max_steps" in issue.message
