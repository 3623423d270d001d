"""The judged report over judgments, pairwise verdicts and labels built here: corrected rates
(judging.md §8 example A), calibration, failure attribution (F4), repeated trials (PK), the paired
comparison (MN), pairwise win rates and position bias, judge health and cost, the Markdown
sections and the Parquet tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.grade import CaseGrade, GraderResult, TrialGrade, Verdict
from evals_pipeline.models.judging import (
    CaseJudgment,
    CasePairwise,
    Dimension,
    DimensionJudgment,
    FailureClassification,
    JudgeVerdict,
    PairwiseDimension,
    PairwiseReading,
    PairwiseVerdict,
    TrialJudgment,
)
from evals_pipeline.models.report import EvalReport
from evals_pipeline.reporting import HumanLabel, build_report, render_markdown, write_report
from evals_pipeline.statistics import pairwise_judge
from evals_pipeline_tests.reporting.test_reporting import documented_columns

ENVIRONMENTAL = FailureClassification(
    primary="llm_provider_error", tier="environmental", rule_id="E2.status"
)
CAPABILITY = FailureClassification(
    primary="incorrect_implementation", tier="capability", rule_id="C3.graders"
)


def dimension(
    name: Dimension, passed: bool | None, votes: Sequence[JudgeVerdict] = ()
) -> DimensionJudgment:
    score = None if passed is None else float(passed)
    return DimensionJudgment(
        dimension=name,
        votes=tuple(votes),
        n_valid=sum(v.valid is True for v in votes),
        heuristic_score=score,
        weight_heuristic=0.7,
        blended_score=score,
        passed=passed,
    )


def judged(
    agent: str,
    test_id: str,
    passed: Sequence[bool | None],
    *,
    name: Dimension = "correctness",
    failure: FailureClassification | None = None,
    votes: Sequence[JudgeVerdict] = (),
    calls: int = 0,
    cost: float | None = None,
) -> CaseJudgment:
    """A case judgment whose trial i has one dimension with decision passed[i]."""
    return CaseJudgment(
        case_key=test_id,
        test_id=test_id,
        agent=agent,
        trials=tuple(
            TrialJudgment(trial=i, dimensions=(dimension(name, p, votes),), failure=failure)
            for i, p in enumerate(passed)
        ),
        judge_calls=calls,
        judge_input_tokens=10 * calls,
        judge_output_tokens=calls,
        judge_cost_usd=cost,
    )


def graded(agent: str, test_id: str, verdicts: Sequence[Verdict]) -> CaseGrade:
    trials = [
        TrialGrade(
            trial=i,
            score=float(v == "pass"),
            verdict=v,
            execution_status={"pass": "ok", "fail": "quality_failure"}.get(v, "execution_error"),
            failure_stage="agent" if v == "error" else None,
        )
        for i, v in enumerate(verdicts)
    ]
    best = "pass" if "pass" in verdicts else "fail" if "fail" in verdicts else "error"
    return CaseGrade(
        case_key=test_id,
        test_id=test_id,
        agent=agent,
        threshold=0.5,
        score=float(best == "pass"),
        verdict=best,
        execution_status="ok" if best == "pass" else "quality_failure",
        trials=trials,
    )


def label(
    test_id: str, human: str, split: str | None = "test", agent: str = "claude-code"
) -> HumanLabel:
    return HumanLabel.model_validate(
        {
            "test_id": test_id,
            "agent": agent,
            "dimension": "correctness",
            "human_verdict": human,
            "split": split,
        }
    )


# --- corrected rates ------------------------------------------------------------------------

AGENT = "Claude Code"


def example_a() -> tuple[list[CaseJudgment], list[HumanLabel]]:
    """§8 example A: 400 of 500 judged trials pass; test labels tp 46/50, tn 44/50.

    Plus what must not count: 20 environmental failures (out of n), dev labels that disagree
    with every decision, a label on an environmental trial and one naming no trial.
    """
    judgments = [judged(AGENT, f"t{i:03}", [i < 400]) for i in range(500)]
    judgments += [judged(AGENT, f"env{i}", [False], failure=ENVIRONMENTAL) for i in range(20)]
    labels = (
        [label(f"t{i:03}", "PASS") for i in range(46)]  # judge PASS, human PASS: tp
        + [label(f"t{i:03}", "PASS") for i in range(400, 404)]  # judge FAIL, human PASS: fn
        + [label(f"t{i:03}", "FAIL") for i in range(404, 448)]  # judge FAIL, human FAIL: tn
        + [label(f"t{i:03}", "FAIL") for i in range(46, 52)]  # judge PASS, human FAIL: fp
        + [label(f"t{i:03}", "FAIL", split="dev") for i in range(100, 130)]
        + [label("env0", "FAIL"), label("nowhere", "PASS")]
    )
    return judgments, labels


def test_rates_reproduce_example_a_with_the_test_split_and_without_environmental_trials() -> None:
    judgments, labels = example_a()
    report = build_report("s", [], agents=[AGENT], judgments=judgments, labels=labels)
    [rate] = report.rates
    assert (rate.agent, rate.dimension, rate.n, rate.n_passed) == (AGENT, "correctness", 500, 400)
    assert rate.n_environmental == 20
    assert (rate.m1, rate.m0) == (50, 50)
    assert rate.observed_rate == pytest.approx(0.8, abs=5e-5)
    assert rate.tpr == pytest.approx(0.92, abs=5e-5)
    assert rate.tnr == pytest.approx(0.88, abs=5e-5)
    assert rate.corrected_rate == pytest.approx(0.85, abs=5e-5)
    assert rate.ci95_low == pytest.approx(0.7686, abs=5e-5)
    assert rate.ci95_high == pytest.approx(0.9728, abs=5e-5)
    assert rate.correction_valid and not rate.clipped and rate.reason == ""
    assert rate.method == "rogan_gladen_1978+lang_reiczigel_2014"

    cal = report.calibration
    assert cal is not None
    assert (cal.split, cal.labels_total, cal.labels_in_split) == ("test", 132, 102)
    assert (cal.labels_used, cal.unmatched, cal.environmental) == (100, 1, 1)
    [dim] = cal.dimensions
    assert (dim.tp, dim.fn, dim.tn, dim.fp) == (46, 4, 44, 6)
    assert dim.tpr_ci95 == pytest.approx((0.8116, 0.9685), abs=5e-5)  # W1
    assert dim.tnr_ci95 == pytest.approx((0.7620, 0.9438), abs=5e-5)  # W2
    assert dim.kappa == pytest.approx(0.8, abs=5e-5)  # K1
    assert dim.warnings == ()


def test_without_splits_every_label_counts() -> None:
    judgments, _ = example_a()
    labels = [label(f"t{i:03}", "PASS", split=None) for i in range(50)]
    labels += [label(f"t{i:03}", "FAIL", split=None) for i in range(400, 450)]
    report = build_report("s", [], agents=[AGENT], judgments=judgments, labels=labels)
    assert report.calibration is not None and report.calibration.split == "all"
    [rate] = report.rates
    assert (rate.tpr, rate.tnr, rate.corrected_rate) == (1.0, 1.0, 0.8)


def test_without_labels_the_correction_is_not_valid_and_says_why() -> None:
    judgments, labels = example_a()
    [rate] = build_report("s", [], agents=[AGENT], judgments=judgments).rates
    assert rate.observed_rate == pytest.approx(0.8)
    assert rate.corrected_rate is None and not rate.correction_valid
    assert (rate.reason, rate.ci95_low, rate.ci95_high) == ("no-calibration-file", 0.0, 1.0)
    assert rate.n == 500  # environmental trials are still excluded

    other = [judged(AGENT, "v", [True], name="verification")]
    report = build_report("s", [], agents=[AGENT], judgments=judgments + other, labels=labels)
    by_dimension = {r.dimension: r for r in report.rates}
    assert list(by_dimension) == ["correctness", "verification"]
    assert by_dimension["correctness"].correction_valid
    verification = by_dimension["verification"]
    assert not verification.correction_valid
    assert verification.reason == "no-labels-for-dimension"
    assert verification.corrected_rate is None and verification.observed_rate == 1.0


def test_undecided_dimensions_leave_n_and_one_class_of_labels_is_not_enough() -> None:
    judgments = [judged("a", "t1", [True, None, False])]
    labels = [label("t1", "PASS", agent="a")]
    [rate] = build_report("s", [], agents=["a"], judgments=judgments, labels=labels).rates
    assert (rate.n, rate.n_passed, rate.n_undecided) == (2, 1, 1)
    assert rate.reason == "no-calibration-for-a-class" and rate.m0 == 0


# --- failure attribution, repeated trials -------------------------------------------------------


def test_failure_breakdown_f4() -> None:
    grades = [graded("a", f"t{i}", ["pass" if i < 24 else "fail"]) for i in range(40)]
    judgments = [
        judged("a", f"t{i}", [False], failure=ENVIRONMENTAL if i < 28 else CAPABILITY)
        for i in range(24, 40)
    ]
    # a stale classification of a trial the grades hold as passed does not count
    judgments.append(judged("a", "t0", [True], failure=CAPABILITY))
    report = build_report("s", grades, agents=["a"], judgments=judgments)
    [f] = report.failure_breakdown
    b = f.breakdown
    assert (f.agent, b.n_trials, b.n_failed, f.n_unclassified) == ("a", 40, 16, 0)
    assert b.by_tier["environmental"].count == 4 and b.by_tier["capability"].count == 12
    assert b.by_category["llm_provider_error"].count == 4
    assert b.infra_failure_rate == pytest.approx(0.1, abs=5e-5)
    assert b.pass_rate_incl_infra == pytest.approx(0.6, abs=5e-5)
    assert b.pass_rate_excl_infra == pytest.approx(24 / 36, abs=5e-5)
    text = render_markdown(report)
    assert "## Failure attribution" in text
    assert "| a | 40 | 24 | 16 | 4 | 0 | 12 | 0 | 10.0% | 60.0% | 66.7% |" in text
    assert "| a | E2 llm_provider_error | environmental | 4 | 25.0% |" in text


def test_no_failure_breakdown_without_judgments() -> None:
    report = build_report("s", [graded("a", "t", ["fail"])], agents=["a"])
    assert report.failure_breakdown == []
    assert "Failure attribution" not in render_markdown(report)


def test_repeated_trials_pk_errors_count_as_failures() -> None:
    grades = [
        graded("a", "c5", ["pass"] * 5),
        graded("a", "c4", ["pass", "pass", "fail", "pass", "pass"]),
        graded("a", "c2", ["error", "pass", "fail", "pass", "fail"]),
        graded("a", "c0", ["fail", "error", "fail", "fail", "fail"]),
        graded("b", "c5", ["pass", "pass"]),
        graded("b", "c4", ["pass"]),
    ]
    report = build_report("s", grades, agents=["a", "b"])
    a, b = report.repeated_trials
    assert (a.agent, a.n_cases, a.trials_per_case) == ("a", 4, 5)
    by_k = {v.k: (v.pass_at_k, v.pass_hat_k) for v in a.values}
    assert list(by_k) == [1, 2, 3, 4, 5]
    for k, (at, hat) in {
        1: (0.55, 0.55),
        2: (0.675, 0.425),
        3: (0.725, 0.35),
        5: (0.75, 0.25),
    }.items():
        assert by_k[k] == pytest.approx((at, hat), abs=5e-5)
    assert b.values == () and b.reason == "uneven trials per case (1, 2)"
    text = render_markdown(report)
    assert "## Repeated trials" in text
    assert "| a | 4 | 2 | 67.5% | 42.5% |" in text
    assert "- b: no pass@k, uneven trials per case (1, 2)" in text


# --- paired comparison --------------------------------------------------------------------------


def mn_grades() -> list[CaseGrade]:
    """Vector MN: 50 cases, a 20 both pass, b 11 A only, c 3 B only, d 16 both fail."""
    outcomes = [("pass", "pass")] * 20 + [("pass", "fail")] * 11
    outcomes += [("fail", "pass")] * 3 + [("fail", "fail")] * 16
    grades = []
    for i, (x, y) in enumerate(outcomes):
        grades += [graded("A", f"c{i:02}", [x]), graded("B", f"c{i:02}", [y])]
    return [*grades, graded("A", "only-a", ["pass"])]  # not shared: left out


def test_mcnemar_mn_through_the_report() -> None:
    report = build_report("s", mn_grades(), agents=["A", "B"])
    [c] = report.comparisons
    assert (c.agent_a, c.agent_b, c.n_cases) == ("A", "B", 50)
    m = c.mcnemar
    assert m is not None
    assert (m.table.a, m.table.b, m.table.c, m.table.d) == (20, 11, 3, 16)
    assert m.p_exact == pytest.approx(940 / 16384, abs=5e-7)
    assert m.p_mid == pytest.approx(576 / 16384, abs=5e-7)
    assert m.delta == pytest.approx(0.16, abs=5e-5)
    assert m.se == pytest.approx(0.072054, abs=5e-7)
    assert (m.wald_low, m.wald_high) == pytest.approx((0.0188, 0.3012), abs=5e-5)
    boot = c.bootstrap
    assert boot is not None
    assert (boot.n_resamples, boot.seed, report.bootstrap_seed) == (10_000, 12345, 12345)
    assert boot.ci95_low == pytest.approx(0.02, abs=0.02)
    assert boot.ci95_high == pytest.approx(0.30, abs=0.02)
    assert boot.p_delta_le_zero == pytest.approx(0.018, abs=0.02)
    assert c.pairwise == [] and c.position_bias_detected is None
    assert report.position_bias_detected is None
    again = build_report("s", mn_grades(), agents=["A", "B"])
    assert again.comparisons[0].bootstrap == boot  # seeded: the same numbers every time

    text = render_markdown(report)
    assert "## Paired comparison" in text
    assert "seed 12345" in text
    row = next(line for line in text.splitlines() if line.startswith("| A | B | 50 |"))
    assert "| 20 / 11 / 3 / 16 | +0.160 | [+0.019, +0.301] |" in row
    assert row.endswith("| 0.0352 | 0.0574 |")


# --- pairwise and judge health ------------------------------------------------------------------


def reading(judge: str, r1: str, r2: str) -> PairwiseReading:
    result = pairwise_judge(r1, r2, judge_model=f"{judge}-2025")
    return PairwiseReading(judge=judge, **result.model_dump())


def pair(
    case: str,
    first: str,
    second: str,
    verdict: str,
    readings: Sequence[PairwiseReading],
    *,
    per_dimension: str | None = None,
) -> CasePairwise:
    bias = any(r.position_following for r in readings)
    overall = PairwiseDimension(
        dimension="overall", readings=tuple(readings), verdict=verdict, bias_detected=bias
    )
    dims = ()
    if per_dimension is not None:
        dims = (
            PairwiseDimension(
                dimension="correctness", readings=(), verdict=per_dimension, bias_detected=False
            ),
        )
    winner = {"A": first, "B": second}.get(verdict)
    return CasePairwise(
        case_key=case,
        pairs=(
            PairwiseVerdict(
                case_key=case, test_id=case, agent_a=first, agent_b=second, seed=7,
                winner=winner, overall=overall, per_dimension=dims, bias_detected=bias,
                judge_calls=2 * len(readings), judge_cost_usd=0.01,
            ),
        ),
    )  # fmt: skip


def consistent(judge: str = "j2") -> list[PairwiseReading]:
    return [reading(judge, "FIRST", "SECOND")]


def test_pairwise_win_rate_maps_verdicts_back_to_the_agents() -> None:
    pairwise = [
        pair("c1", "a", "b", "A", consistent(), per_dimension="A"),  # a wins
        pair("c2", "b", "a", "B", consistent(), per_dimension="A"),  # a wins; b wins correctness
        pair("c3", "a", "b", "TIE", [reading("j2", "TIE", "TIE")]),
        pair("c4", "b", "a", "A", consistent()),  # b wins
    ]
    report = build_report("s", [], agents=["a", "b"], pairwise=pairwise)
    [c] = report.comparisons
    assert (c.agent_a, c.agent_b, c.n_cases, c.n_pairwise) == ("a", "b", 0, 4)
    assert c.mcnemar is None and c.bootstrap is None
    overall, correctness = c.pairwise
    assert (overall.dimension, overall.n, overall.wins, overall.ties, overall.losses) == (
        "overall", 4, 2, 1, 1,
    )  # fmt: skip
    assert overall.win_rate == pytest.approx(0.625)
    assert (correctness.dimension, correctness.wins, correctness.losses) == ("correctness", 1, 1)
    assert c.position_bias_detected is False and report.position_bias_detected is False
    [j2] = report.judge_health
    assert j2.position is not None and j2.position.n == 4 and j2.position.consistent == 4
    assert not j2.bias_detected

    text = render_markdown(report)
    assert "## Pairwise (position-swapped)" in text
    assert "| a | b | overall | 4 | 2 | 1 | 1 | 62.5% | no |" in text


def test_a_judge_reading_first_first_is_flagged_and_the_pair_bias_propagates() -> None:
    steady = [pair(f"s{i}", "a", "b", "A", consistent()) for i in range(5)]
    biased = pair("c9", "a", "b", "A", [*consistent(), reading("j1", "FIRST", "FIRST")])
    report = build_report("s", [], agents=["a", "b"], pairwise=[*steady, biased])
    health = {h.judge: h for h in report.judge_health}
    j1, j2 = health["j1"], health["j2"]
    assert j1.position is not None
    assert (j1.position.n, j1.position.first_first, j1.position.position_consistency) == (1, 1, 0.0)
    assert j1.position.primacy_rate == 1.0 and j1.bias_detected
    assert j1.models == ("j1-2025",)
    assert j2.position is not None and j2.position.position_consistency == 1.0
    assert not j2.bias_detected
    [c] = report.comparisons
    assert c.pairwise[0].bias_detected
    assert c.position_bias_detected is True and report.position_bias_detected is True
    text = render_markdown(report)
    assert "Position bias detected: **yes**." in text
    assert "## Judge health" in text


def test_a_flagged_judge_alone_sets_position_bias() -> None:
    # j3 never picks the same slot twice, so no pair is biased, but its verdicts change with the
    # order (a win one way, a tie the other): position consistency 0 < 0.80 flags the judge, and
    # with it every comparison it judged
    pairs = [pair(f"c{i}", "a", "b", "TIE", [reading("j3", "FIRST", "TIE")]) for i in range(4)]
    report = build_report("s", [], agents=["a", "b"], pairwise=pairs)
    [j3] = report.judge_health
    assert j3.position is not None and j3.position.position_consistency == 0.0
    assert j3.position.first_first == 0 and j3.bias_detected
    [c] = report.comparisons
    assert not any(t.bias_detected for t in c.pairwise)
    assert c.position_bias_detected is True and report.position_bias_detected is True


def vote(
    model: str,
    verdict: str,
    valid: bool | None,
    *,
    partial: bool = False,
    judge: str | None = None,
) -> JudgeVerdict:
    return JudgeVerdict(
        judge=judge,
        judge_model=model,
        dimension="correctness",
        verdict=verdict,
        confidence=0.9,
        valid=valid,
        partially_grounded=partial,
    )


def test_judge_health_grounding_and_per_judge_calibration() -> None:
    good = [vote("j1-2025", "PASS", True), vote("m2", "FAIL", False)]
    bad = [vote("j1-2025", "FAIL", True, partial=True), vote("m2", "PASS", None)]
    judgments = [judged("a", "t1", [True], votes=good), judged("a", "t2", [False], votes=bad)]
    pairwise = [pair("t1", "a", "b", "A", [reading("j1", "FIRST", "SECOND")])]
    labels = [label("t1", "PASS", agent="a"), label("t2", "PASS", agent="a")]
    report = build_report(
        "s", [], agents=["a", "b"], judgments=judgments, pairwise=pairwise, labels=labels
    )
    health = {h.judge: h for h in report.judge_health}
    assert list(health) == ["j1", "m2"]  # votes of model j1-2025 are credited to target j1
    j1, m2 = health["j1"], health["m2"]
    assert (j1.votes, j1.invalid, j1.partially_grounded, j1.grounding_failure_rate) == (
        2,
        0,
        1,
        0.0,
    )
    assert j1.pairwise_readings == 1 and j1.position is not None
    assert j1.calibration is not None and (j1.calibration.tp, j1.calibration.fn) == (1, 1)
    assert (m2.votes, m2.invalid, m2.ungrounded) == (2, 1, 1)
    assert (m2.grounding_failure_rate, m2.abstention_rate) == (0.5, 1.0)
    assert m2.position is None and m2.calibration is None  # no valid vote on a labelled trial


def test_two_judge_targets_of_one_model_keep_their_own_health() -> None:
    # The same model behind two targets (say, two base URLs): votes name their target.
    votes = [vote("m", "PASS", True, judge="direct"), vote("m", "FAIL", False, judge="proxied")]
    judgments = [judged("a", "t1", [True], votes=votes)]
    pairwise = [pair("t1", "a", "b", "A", [reading("direct", "FIRST", "SECOND")])]
    report = build_report("s", [], agents=["a", "b"], judgments=judgments, pairwise=pairwise)
    health = {h.judge: h for h in report.judge_health}
    assert sorted(health) == ["direct", "proxied"]
    assert (health["direct"].votes, health["direct"].invalid) == (1, 0)
    assert (health["proxied"].votes, health["proxied"].invalid) == (1, 1)
    assert health["proxied"].grounding_failure_rate == 1.0


def test_judge_cost_is_kept_apart_from_the_agents() -> None:
    judgments = [
        judged("a", "t1", [True], calls=10, cost=0.5),
        judged("a", "t2", [True], calls=5, cost=None),
        judged("b", "t1", [True], calls=10, cost=0.25),
    ]
    pairwise = [pair("t1", "a", "b", "A", consistent())]
    grades = [graded("a", "t1", ["pass"]), graded("b", "t1", ["pass"])]
    report = build_report("s", grades, agents=["a", "b"], judgments=judgments, pairwise=pairwise)
    usage = report.judge_usage
    assert usage is not None
    assert (usage.by_agent["a"].calls, usage.by_agent["a"].cost_usd) == (15, 0.5)
    assert (usage.pairwise.calls, usage.pairwise.cost_usd) == (2, 0.01)
    assert usage.graders == LlmUsage()
    assert (usage.total.calls, usage.total.input_tokens) == (27, 250)
    assert usage.total.cost_usd == pytest.approx(0.76)
    assert [a.cost_usd for a in report.agents] == [0.0, 0.0]
    text = render_markdown(report)
    assert "## Judge cost" in text
    assert "| **total** | 27 | 0 | 250 | 25 | 0.7600 |" in text
    assert "LLM graders" not in text
    assert build_report("s", grades, agents=["a", "b"]).judge_usage is None


def test_llm_graders_usage_counts_as_judge_cost() -> None:
    grader_call = LlmUsage(calls=1, input_tokens=100, output_tokens=10, cost_usd=0.02)
    summed = graded("a", "t1", ["pass"])
    summed.trials[0].judge_usage = grader_call + grader_call  # the trial's sum of its graders
    per_grader = graded("a", "t2", ["fail"])  # only the graders carry it
    per_grader.trials[0].graders = [
        GraderResult(name="g", type="llm-grader", verdict="fail", judge_usage=grader_call)
    ]
    report = build_report("s", [summed, per_grader], agents=["a"])
    usage = report.judge_usage
    assert usage is not None and usage.judgments == LlmUsage() and usage.by_agent == {}
    assert (usage.graders.calls, usage.graders.input_tokens) == (3, 300)
    assert usage.graders.cost_usd == pytest.approx(0.06)
    assert usage.total == usage.graders
    assert report.agents[0].cost_usd == 0.0
    assert "| LLM graders | 3 | 0 | 300 | 30 | 0.0600 |" in render_markdown(report)


# --- Markdown, JSON and Parquet -----------------------------------------------------------------


def test_markdown_shows_the_judged_dimensions_with_the_corrected_numbers() -> None:
    judgments, labels = example_a()
    report = build_report(
        "s", [], agents=[AGENT], judgments=judgments, labels=labels, labels_source="labels.csv"
    )
    lines = render_markdown(report).splitlines()
    start = lines.index("## Judged dimensions")
    assert "test split" in lines[start + 2]
    assert lines[start + 4] == (
        "| agent | dimension | n | observed | corrected | 95% CI | TPR | TNR | valid |"
    )
    assert lines[start + 6] == (
        "| Claude Code | correctness | 500 | 80.0% | 85.0% | [76.9%, 97.3%] | 92.0% | 88.0% | yes |"
    )
    assert "## Calibration" in lines
    assert any(
        line.startswith("100 of 132 labels used from `labels.csv` (test split: 102;")
        for line in lines
    )
    assert (
        "| correctness | 100 | 50 | 50 | 92.0% [81.2%, 96.8%] | 88.0% [76.2%, 94.4%] | 0.800 | - |"
        in lines
    )


def test_markdown_without_labels_says_the_correction_needs_them() -> None:
    report = build_report("s", [], agents=["a"], judgments=[judged("a", "t", [True, False])])
    text = render_markdown(report)
    assert "no calibration file" in text
    assert "| a | correctness | 2 | 50.0% | - | - | - | - | no: no-calibration-file |" in text
    assert "## Calibration" not in text


def judged_run() -> tuple[EvalReport, list[CaseGrade], list[CaseJudgment], list[CasePairwise]]:
    grades = [graded("a", "t1", ["pass", "fail"]), graded("b", "t1", ["fail", "fail"])]
    judgments = [
        judged("a", "t1", [True, False], votes=[vote("j1-2025", "PASS", True)], calls=3),
        judged("b", "t1", [False, None], failure=CAPABILITY),
    ]
    pairwise = [
        pair("t1", "b", "a", "B", [*consistent("j1"), reading("j2", "FIRST", "FIRST")],
             per_dimension="TIE")
    ]  # fmt: skip
    labels = [label("t1", "PASS", agent="a"), label("t1", "FAIL", agent="b")]
    report = build_report(
        "s", grades, agents=["a", "b"], judgments=judgments, pairwise=pairwise, labels=labels
    )
    return report, grades, judgments, pairwise


def test_the_judged_report_round_trips_through_json() -> None:
    report = judged_run()[0]
    assert EvalReport.model_validate_json(report.model_dump_json()) == report


def test_write_report_writes_the_judged_tables_with_the_documented_columns(
    tmp_path: Path,
) -> None:
    report, grades, judgments, pairwise = judged_run()
    files = write_report(report, grades, tmp_path, judgments=judgments, pairwise=pairwise)
    assert files.dimensions_parquet == tmp_path / "dimensions.parquet"
    assert files.pairwise_parquet == tmp_path / "pairwise.parquet"

    dimensions = pq.read_table(files.dimensions_parquet)
    assert dimensions.column_names == documented_columns("dimensions.parquet")
    rows = dimensions.to_pylist()
    assert [(r["agent"], r["trial"], r["dimension"], r["passed"]) for r in rows] == [
        ("a", 0, "correctness", True),
        ("a", 1, "correctness", False),
        ("b", 0, "correctness", False),
        ("b", 1, "correctness", None),
    ]
    first = rows[0]
    assert (first["suite"], first["case_key"], first["test_id"]) == ("s", "t1", "t1")
    assert (first["blended_score"], first["heuristic_score"], first["panel_score"]) == (
        1.0,
        1.0,
        None,
    )
    assert (first["n_votes"], first["n_valid"], first["llm_excluded"]) == (1, 1, False)
    assert first["failure_primary"] is None
    assert (rows[2]["failure_primary"], rows[2]["failure_tier"]) == (
        "incorrect_implementation",
        "capability",
    )

    table = pq.read_table(files.pairwise_parquet)
    assert table.column_names == documented_columns("pairwise.parquet")
    readings = table.to_pylist()
    assert [(r["dimension"], r["judge"], r["r1"], r["r2"]) for r in readings] == [
        ("overall", "j1", "FIRST", "SECOND"),
        ("overall", "j2", "FIRST", "FIRST"),
    ]
    biased = readings[1]
    assert (biased["agent_a"], biased["agent_b"], biased["winner"], biased["verdict"]) == (
        "b", "a", "a", "B",
    )  # fmt: skip
    assert biased["position_following"] and biased["vote"] == "TIE" and biased["bias_detected"]
    assert (biased["judge_model"], biased["seed"]) == ("j2-2025", 7)


def test_write_report_skips_the_judged_tables_without_rows(tmp_path: Path) -> None:
    report, grades, _, _ = judged_run()
    files = write_report(report, grades, tmp_path, judgments=[judged("a", "t1", [])])
    assert files.dimensions_parquet is None and files.pairwise_parquet is None
    assert not (tmp_path / "dimensions.parquet").exists()
