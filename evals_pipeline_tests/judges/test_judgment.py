"""Votes and pairwise readings collected one provider at a time (each in its own Dagster pool)
add up to the panel's: merged in panel order, they give the same records as one pass over the
whole panel. Real SDK clients against a scripted judge."""

from __future__ import annotations

import json

from evals_pipeline.judges import aggregate_trials, grade_trial
from evals_pipeline.judges.judgment import (
    compare_agents,
    judge_case,
    merge_votes,
    read_pairs,
    trial_votes,
)
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline_tests.judges.conftest import CaseFactory, SessionFactory
from evals_pipeline_tests.llm.conftest import StartScripted

DIMENSIONS = ["correctness", "completeness"]
QUOTE = "Hello, world!"


def _judge_script() -> dict[str, object]:
    evidence = [{"quote": QUOTE, "claim": "it greets"}]
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
            }
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

    whole = trial_votes(case, session, [gpt, claude, nano], spec)
    # The OpenAI judges' step and the Anthropic judge's step, finishing in either order.
    parts = [
        trial_votes(case, session, [claude], spec),
        trial_votes(case, session, [gpt, nano], spec),
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
