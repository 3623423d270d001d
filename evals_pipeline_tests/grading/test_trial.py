"""grade_trial's scoring rules and aggregate_trials' strategies."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.grading import aggregate_trials, grade_trial
from evals_pipeline.grading.registry import check_registry, evaluators
from evals_pipeline.grading.trial import NO_GRADERS
from evals_pipeline.models.assertions import ASSERTION_SPECS, ASSERTION_TYPES, spec_types
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader

HIT = {"type": "contains", "value": "Hello"}
MISS = {"type": "contains", "value": "Goodbye"}


def test_every_assertion_type_has_an_evaluator() -> None:
    registered = evaluators()
    check_registry()
    assert set(ASSERTION_TYPES) <= set(registered)
    assert set(registered) == {kind for spec in ASSERTION_SPECS for kind in spec_types(spec)}


def test_passing_trial_copies_the_session_measurements(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    usage = TokenUsage(input=10, output=5)
    trial = grade_trial(make_case([HIT]), make_session(token_usage=usage, cost_usd=0.01), trial=2)
    assert (trial.trial, trial.score, trial.verdict) == (2, 1.0, "pass")
    assert (trial.execution_status, trial.failure_stage, trial.error) == ("ok", None, None)
    # The runner's wall time (end - start), not the agent's own figure.
    assert (trial.token_usage, trial.cost_usd, trial.wall_ms) == (usage, 0.01, 1200)


def test_weighted_mean_against_the_case_threshold(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    assertions = [{**HIT, "weight": 3}, {**MISS, "weight": 1}]
    failing = grade_trial(make_case(assertions), make_session())
    assert (failing.score, failing.verdict, failing.execution_status) == (
        0.75,
        "fail",
        "quality_failure",
    )
    lenient = grade_trial(make_case(assertions, threshold=0.7), make_session())
    assert (lenient.verdict, lenient.execution_status) == ("pass", "ok")


def test_zero_weight_graders_count_for_nothing(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    trial = grade_trial(make_case([HIT, {**MISS, "weight": 0}]), make_session())
    assert trial.score == 1.0


def test_score_on_the_threshold_passes_despite_rounding(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    partial = python_grader(tmp_path, "g.py", "print('{\"score\": 0.4}')")
    assertions = [HIT, HIT, {"type": "code-grader", "command": partial}]
    trial = grade_trial(make_case(assertions), make_session())
    assert trial.score == pytest.approx(0.8)
    assert trial.verdict == "pass"


def test_required_grader_below_its_gate_zeroes_the_trial(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    trial = grade_trial(make_case([HIT, HIT, {**MISS, "required": True}]), make_session())
    assert trial.graders[2].gate == 0.8
    assert (trial.score, trial.verdict) == (0.0, "fail")

    partial = python_grader(tmp_path, "g.py", "print('{\"score\": 0.6}')")
    gated = {"type": "code-grader", "command": partial, "required": True, "min_score": 0.5}
    passes_gate = grade_trial(make_case([HIT, gated]), make_session())
    assert passes_gate.graders[1].gate == 0.5
    assert passes_gate.score == pytest.approx(0.8)
    below_numeric_gate = grade_trial(
        make_case([HIT, {**gated, "min_score": None, "required": 0.7}]), make_session()
    )
    assert below_numeric_gate.graders[1].gate == 0.7
    assert below_numeric_gate.score == 0.0


def test_negate_flips_score_verdict_and_assertions(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    trial = grade_trial(make_case([{**MISS, "negate": True}]), make_session())
    grade = trial.graders[0]
    assert (grade.score, grade.verdict, trial.verdict) == (1.0, "pass", "pass")
    assert grade.assertions[0].passed is True
    assert (grade.assertions[0].evidence or "").startswith("[Negated] not found in output")
    negated_hit = grade_trial(make_case([{**HIT, "negate": True}]), make_session())
    assert (negated_hit.score, negated_hit.graders[0].verdict) == (0.0, "fail")


def test_failed_grader_makes_the_trial_an_error(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    crash = python_grader(tmp_path, "crash.py", "import sys\nsys.exit('disk on fire')")
    assertions = [HIT, {"type": "code-grader", "name": "file-check", "command": crash}]
    trial = grade_trial(make_case(assertions), make_session())
    assert (trial.verdict, trial.execution_status, trial.failure_stage) == (
        "error",
        "execution_error",
        "grader",
    )
    assert message_of(trial.error) == "grader 'file-check' failed: exited with code 1: disk on fire"
    assert trial.score == 0.0
    hit, crashed = trial.graders
    assert (hit.verdict, hit.score) == ("pass", 1.0)
    assert (crashed.verdict, crashed.score, crashed.stderr) == ("error", None, "disk on fire\n")


def test_failed_agent_is_not_graded(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    marker = tmp_path / "grader-ran"
    case = make_case([HIT, {"type": "code-grader", "command": f"touch {marker}"}])
    trial = grade_trial(case, make_session(status="timed_out", error="agent timed out after 600 s"))
    assert (trial.verdict, trial.execution_status, trial.failure_stage) == (
        "error",
        "execution_error",
        "agent",
    )
    assert message_of(trial.error) == "agent timed out after 600 s"
    assert trial.graders == []
    assert not marker.exists()
    assert message_of(grade_trial(case, make_session(status="agent_error")).error) == "agent_error"


def test_no_assertions_is_an_error(make_case: CaseFactory, make_session: SessionFactory) -> None:
    trial = grade_trial(make_case([]), make_session())
    assert (trial.verdict, trial.execution_status, trial.failure_stage) == (
        "error",
        "execution_error",
        "grader",
    )
    assert message_of(trial.error) == NO_GRADERS


def _trial(index: int, score: float, threshold: float = 0.8) -> TrialGrade:
    passed = score >= threshold
    return TrialGrade(
        trial=index,
        score=score,
        verdict="pass" if passed else "fail",
        execution_status="ok" if passed else "quality_failure",
    )


def _error(index: int, stage: str = "agent") -> TrialGrade:
    return TrialGrade.model_validate(
        {
            "trial": index,
            "verdict": "error",
            "execution_status": "execution_error",
            "failure_stage": stage,
            "error": f"trial {index} broke",
        }
    )


def test_pass_at_k_takes_the_best_trial(make_case: CaseFactory) -> None:
    case = make_case([HIT], trials={"count": 3, "strategy": "pass_at_k"})
    trials = [_trial(0, 0.5), _error(1), _trial(2, 0.9)]
    grade = aggregate_trials(case, trials)
    assert (grade.score, grade.verdict, grade.execution_status) == (0.9, "pass", "ok")
    assert (grade.case_key, grade.test_id, grade.agent, grade.threshold) == (
        "case-1",
        "case-1",
        "mock",
        0.8,
    )
    assert grade.trials == trials
    failing = aggregate_trials(case, [_trial(0, 0.5), _trial(1, 0.7)])
    assert (failing.score, failing.verdict, failing.execution_status) == (
        0.7,
        "fail",
        "quality_failure",
    )


def test_mean_counts_an_errored_trial_as_zero(make_case: CaseFactory) -> None:
    # AgentV: the mean is over every trial (an error scores 0), and the case is `ok` when any
    # trial was, even when the mean is below the threshold.
    case = make_case([HIT], trials={"count": 3, "strategy": "mean"})
    grade = aggregate_trials(case, [_trial(0, 1.0), _error(1), _trial(2, 0.5)])
    assert (grade.score, grade.verdict, grade.execution_status) == (0.5, "fail", "ok")
    low = aggregate_trials(case, [_trial(0, 0.5), _trial(1, 0.6), _trial(2, 0.7)])
    assert (low.verdict, low.execution_status) == ("fail", "quality_failure")
    lenient = make_case([HIT], threshold=0.7, trials={"count": 2, "strategy": "mean"})
    assert aggregate_trials(lenient, [_trial(0, 1.0), _trial(1, 0.5)]).verdict == "pass"


def test_all_trials_errored(make_case: CaseFactory) -> None:
    grade = aggregate_trials(make_case([HIT]), [_error(0, "grader"), _error(1, "agent")])
    assert (grade.score, grade.verdict, grade.execution_status) == (0.0, "error", "execution_error")
    assert (grade.failure_stage, message_of(grade.error)) == ("grader", "trial 0 broke")


@pytest.mark.parametrize("strategy", ["pass_at_k", "mean"])
def test_one_trial_is_that_trial(make_case: CaseFactory, strategy: str) -> None:
    case = make_case([HIT], trials={"count": 1, "strategy": strategy})
    for trial in (_trial(0, 0.85), _trial(0, 0.3)):
        grade = aggregate_trials(case, [trial])
        assert (grade.score, grade.verdict, grade.execution_status) == (
            trial.score,
            trial.verdict,
            trial.execution_status,
        )


def test_no_trials_is_a_caller_bug(make_case: CaseFactory) -> None:
    with pytest.raises(ValueError, match="no trials"):
        aggregate_trials(make_case([HIT]), [])


def test_pass_at_k_stops_at_the_first_passing_trial(make_case: CaseFactory) -> None:
    case = make_case([HIT], trials={"count": 3, "strategy": "pass_at_k"})
    grade = aggregate_trials(case, [_trial(2, 1.0), _trial(0, 0.5), _trial(1, 0.85)])
    # AgentV never runs trial 2: trial 1 passed (score >= 0.8).
    assert grade.score == 0.85
    assert [t.trial for t in grade.trials] == [0, 1]


def test_confidence_interval_takes_the_lower_bound(make_case: CaseFactory) -> None:
    case = make_case([HIT], trials={"count": 3, "strategy": "confidence_interval"})
    grade = aggregate_trials(case, [_trial(0, 1.0), _trial(1, 0.5), _trial(2, 0.75)])
    # mean 0.75, stddev 0.25, t(2) = 4.303.
    assert grade.score == pytest.approx(0.75 - 4.303 * 0.25 / 3**0.5)
    wide = aggregate_trials(case, [_trial(0, 1.0), _trial(1, 0.0), _trial(2, 0.5)])
    assert wide.score == 0.0  # the lower bound is clamped at 0
    tight = aggregate_trials(case, [_trial(0, 0.9), _trial(1, 0.8), _trial(2, 0.85)])
    assert tight.score == pytest.approx(0.85 - 4.303 * 0.05 / 3**0.5)
    assert tight.verdict == "fail" and tight.execution_status == "ok"


def test_cost_limit_stops_counting_trials(make_case: CaseFactory) -> None:
    case = make_case([HIT], trials={"count": 3, "strategy": "mean", "cost_limit_usd": 0.02})
    trials = [
        _trial(i, score).model_copy(update={"cost_usd": 0.01})
        for i, score in enumerate([1.0, 0.0, 1.0])
    ]
    grade = aggregate_trials(case, trials)
    assert [t.trial for t in grade.trials] == [0, 1]
    assert grade.score == 0.5


REPO = Path(__file__).resolve().parents[2]
BUN = REPO / "conformance" / "node_modules" / ".bin" / "bun"


def test_a_bun_graders_missing_module_is_in_the_cases_error(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    if not BUN.exists():  # a real bun runs here: without it the test fails, never skips
        pytest.fail(f"{BUN} is missing: run `make agentv` (needs node and npm)")
    # bun ends every crash with its banner ("Bun v1.4.5 (Linux x64)"): the line above it counts.
    grader = tmp_path / "grade.ts"
    grader.write_text('import { check } from "./missing-helper";\nconsole.log(check());\n')
    assertion = {"type": "code-grader", "name": "ts", "command": [str(BUN), str(grader)]}
    case = make_case([assertion])
    trial = grade_trial(case, make_session())
    grade = aggregate_trials(case, [trial])
    assert grade.verdict == "error"
    assert "Cannot find module './missing-helper'" in (message_of(grade.error) or ""), message_of(
        grade.error
    )
    assert message_of(grade.error) and message_of(grade.error).startswith(
        "grader 'ts' failed: exited with code 1: error:"
    )
    assert "Bun v" in (trial.graders[0].stderr or "")


def test_agentv_scoring_scores_a_failed_grader_0_and_keeps_it_flagged(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    crash = python_grader(tmp_path, "crash.py", "import sys\nsys.exit('disk on fire')")
    assertions = [HIT, {"type": "code-grader", "name": "file-check", "command": crash}]
    case = make_case(assertions, agentv_scoring=True)
    trial = grade_trial(case, make_session())
    # AgentV: the crash is a 0 averaged in, the test a quality verdict on (1 + 0) / 2.
    assert (trial.score, trial.verdict, trial.execution_status) == (0.5, "fail", "quality_failure")
    assert trial.error is None
    crashed = trial.graders[1]
    assert (crashed.score, crashed.verdict) == (0.0, "fail")
    assert message_of(crashed.error) == "exited with code 1: disk on fire"
    assert crashed.stderr == "disk on fire\n"
    assert [a.text for a in crashed.assertions] == [
        "Grader 'file-check' failed: exited with code 1: disk on fire"
    ]
    graded = aggregate_trials(case, [trial])
    assert any(
        w.startswith("grader 'file-check': could not grade (exited with code 1: disk on fire)")
        for w in graded.warnings
    ), graded.warnings
    # Negated, AgentV's 0 becomes 1 and a pass, as any score does.
    negated = grade_trial(
        make_case([{**assertions[1], "negate": True}], agentv_scoring=True), make_session()
    )
    assert (negated.score, negated.verdict, negated.graders[0].verdict) == (1.0, "pass", "pass")
    # Without the option the same trial is an error.
    assert grade_trial(make_case(assertions), make_session()).verdict == "error"


@pytest.mark.parametrize(
    ("stdout", "score", "warning"),
    [
        ('{"score": 0.9', 1.0, "stdout is not valid JSON"),
        ("[1, 2]", 1.0, "stdout is JSON but not an object"),
        (
            '{"score": "high", "assertions": [{"text": "a", "passed": true}, {"text": "b"}]}',
            0.5,
            "score is not a number",
        ),
    ],
)
def test_agentv_scoring_reads_unparsable_output_of_a_grader_that_exited_0_as_agentv(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    stdout: str,
    score: float,
    warning: str,
) -> None:
    grader = python_grader(tmp_path, "odd.py", f"print({stdout!r})")
    assertion = {"type": "code-grader", "name": "odd", "command": grader}
    trial = grade_trial(make_case([assertion], agentv_scoring=True), make_session())
    grade = trial.graders[0]
    assert (grade.score, grade.error) == (score, None)
    assert grade.warnings and grade.warnings[0].startswith(warning), grade.warnings
    assert grade_trial(make_case([assertion]), make_session()).verdict == "error"


def test_agentv_scoring_averages_a_failed_code_grader_member_into_its_composite(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    crash = python_grader(tmp_path, "crash.py", "import sys\nsys.exit('no')")
    composite = {
        "type": "composite",
        "name": "both",
        "assertions": [
            {**HIT, "name": "hit"},
            {"type": "code-grader", "name": "crash", "command": crash},
        ],
        "aggregator": {"type": "weighted_average"},
    }
    trial = grade_trial(make_case([composite], agentv_scoring=True), make_session())
    both = trial.graders[0]
    assert (both.score, both.verdict) == (0.5, "fail")
    assert [(m.name, m.score, m.verdict) for m in both.scores] == [
        ("hit", 1.0, "pass"),
        ("crash", 0.0, "fail"),
    ]
    assert any("grader 'crash': could not grade" in w for w in trial.warnings), trial.warnings
