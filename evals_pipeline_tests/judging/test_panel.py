"""Votes and pairwise readings collected one provider at a time (each in its own Dagster pool)
add up to the panel's: merged in panel order, they give the same records as one pass over the
whole panel; and the panel's check of a failed trial's category. Real SDK clients against
scripted judges."""

from __future__ import annotations

import json

from evals_pipeline.grading import aggregate_trials, grade_trial
from evals_pipeline.judging.attribution import failure_breakdown
from evals_pipeline.judging.panel import (
    compare_agents,
    judge_case,
    merge_votes,
    read_pairs,
    trial_votes,
)
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory
from evals_pipeline_tests.llm.conftest import StartScripted

DIMENSIONS = ["correctness", "completeness"]
QUOTE = "Hello, world!"


def _judge_script(category_quote: str = QUOTE) -> dict[str, object]:
    evidence = [{"quote": QUOTE, "claim": "it greets"}]
    category = {
        "evidence": [{"quote": category_quote, "claim": "the answer never says goodbye"}],
        "verdict": "PASS",
        "confidence": 0.8,
        "critique": "the category fits",
    }
    pairwise = {
        "evidence": evidence,
        "overall": "TIE",
        "per_dimension": dict.fromkeys(DIMENSIONS, "TIE"),
        "confidence": 0.7,
    }
    verdict = {"evidence": evidence, "verdict": "PASS", "confidence": 0.9, "critique": "greets"}
    return {
        "rules": [
            {
                "when": {"contains": "You compare two coding agents"},
                "turns": [{"text": json.dumps(pairwise)}],
            },
            {
                "when": {"contains": "Rules classified the primary reason"},
                "turns": [{"text": json.dumps(category)}],
            },
        ],
        "turns": [{"text": json.dumps(verdict)}],
    }


def test_votes_collected_per_provider_merge_into_the_panels(
    scripted: StartScripted, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    server = scripted(_judge_script())
    gpt, claude, nano = (
        server.client("chat", name="gpt"),
        server.client("anthropic", name="claude"),
        server.client("responses", name="nano"),
    )
    spec = JudgingSpec(panel=["gpt", "claude", "nano"], dimensions=DIMENSIONS)
    case = make_case([{"type": "contains", "value": "Hello"}])
    session = make_session()
    grade = aggregate_trials(case, [grade_trial(case, session, 0)])

    trial = grade.trials[0]
    whole = trial_votes(case, session, trial, [gpt, claude, nano], spec)
    # The OpenAI judges' step and the Anthropic judge's step, finishing in either order.
    parts = [
        trial_votes(case, session, trial, [claude], spec),
        trial_votes(case, session, trial, [gpt, nano], spec),
    ]
    merged = merge_votes(parts, spec.panel)[(case.case_key, case.agent, session.trial)]

    assert [v.judge for v in merged.votes["correctness"]] == ["gpt", "claude", "nano"]
    assert merged.n_valid == whole.n_valid == 6
    assert merged.input_chars == whole.input_chars > 0
    judged = judge_case(case, [session], grade, spec, {session.trial: merged})
    assert judged == judge_case(case, [session], grade, spec, {session.trial: whole})
    assert judged.judge_calls == 6
    correctness = judged.trials[0].dimensions[0]
    assert correctness.n_valid == 3 and correctness.panel_verdict == "PASS"


def test_the_panel_checks_the_category_of_a_failed_trial(
    scripted: StartScripted, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    fair = scripted(_judge_script())
    fabricating = scripted(_judge_script(category_quote="the agent deleted every test file"))
    judges = [
        fair.client("chat", name="gpt"),
        fair.client("anthropic", name="claude"),
        fabricating.client("responses", name="nano"),
    ]
    spec = JudgingSpec(
        panel=["gpt", "claude", "nano"], dimensions=DIMENSIONS, confirm_failures=True
    )
    case = make_case([{"type": "contains", "value": "Goodbye"}])
    session = make_session()
    trial = grade_trial(case, session, 0)
    assert trial.verdict == "fail"

    votes = trial_votes(case, session, trial, judges, spec)
    judged = judge_case(case, [session], aggregate_trials(case, [trial]), spec, {0: votes})

    failure = judged.trials[0].failure
    assert failure is not None and failure.check is not None
    # The fabricated quote is re-asked once, then abstains; the two grounded judges confirm.
    assert [(v.judge, v.valid) for v in failure.check.votes] == [
        ("gpt", True),
        ("claude", True),
        ("nano", False),
    ]
    assert failure.check.n_valid == 2 and failure.check.confirmed is True
    assert {v.dimension for v in failure.check.votes} == {"failure_category"}
    # Each judge was told the category and the rule that fired.
    asked = [b for b in fair.bodies() if "Rules classified the primary reason" in json.dumps(b)]
    assert len(asked) == 2
    assert all(failure.primary in json.dumps(b) and failure.rule_id in json.dumps(b) for b in asked)
    # Two dimensions by three judges, three category checks, one re-ask.
    assert judged.judge_calls == 6 + 3 + 1
    breakdown = failure_breakdown(1, 0, [failure]).by_category[failure.primary]
    assert (breakdown.count, breakdown.confirmed, breakdown.disputed) == (1, 1, 0)


def test_a_passing_trial_gets_no_category_check(
    scripted: StartScripted, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    judge = scripted(_judge_script()).client("chat", name="gpt")
    spec = JudgingSpec(panel=["gpt"], dimensions=DIMENSIONS, quorum=1, confirm_failures=True)
    case = make_case([{"type": "contains", "value": "Hello"}])
    session = make_session()
    votes = trial_votes(case, session, grade_trial(case, session, 0), [judge], spec)
    assert set(votes.votes) == set(DIMENSIONS)


def test_pairwise_readings_per_provider_merge_into_the_panels(
    scripted: StartScripted, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    server = scripted(_judge_script())
    gpt, claude = server.client("chat", name="gpt"), server.client("anthropic", name="claude")
    spec = JudgingSpec(panel=["gpt", "claude"], dimensions=DIMENSIONS, quorum=1)
    cases = [make_case(agent=a, target={"name": a, "provider": "mock"}) for a in ("a", "b")]
    sessions = [make_session(agent=a) for a in ("a", "b")]

    whole = read_pairs(cases, sessions, [gpt, claude], spec)
    parts = read_pairs(cases, sessions, [claude], spec) + read_pairs(cases, sessions, [gpt], spec)
    compared = compare_agents("case-1", parts, spec)

    assert compared == compare_agents("case-1", whole, spec)
    (pair,) = compared.pairs
    assert [r.judge for r in pair.overall.readings] == ["gpt", "claude"]
    assert pair.winner is None and pair.bias_detected is False
    assert pair.judge_calls == 4  # two judges, two orders each
