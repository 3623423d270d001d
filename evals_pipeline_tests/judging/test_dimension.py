"""Dimension judges and pairwise readings over real HTTP: the real SDKs against scripted judges
that are consistent, position-biased, ungrounded, malformed, or rate-limited first."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals_pipeline.judging.dimension import judge_dimension
from evals_pipeline.judging.input import JudgeInput
from evals_pipeline.judging.pairwise import Contestant, compare_pair, order_pair
from evals_pipeline.statistics import panel_vote
from evals_pipeline_tests.llm.conftest import FORMATS, StartScripted

TEXT = (
    "## Task\nFix parse() so that a blank input gives an empty list.\n\n"
    "## Transcript\n[event:3] Write: src/parser.py → ok\n"
    "[event:4] Bash: pytest -q → exit 0\n41 passed in 3.21s\n"
)
INPUT = JudgeInput(
    TEXT,
    sources={"event:4": "[event:4] Bash: pytest -q → exit 0\n41 passed in 3.21s"},
    post_edit_runs=("[event:4] Bash: pytest -q → exit 0\n41 passed in 3.21s",),
)


def reply(verdict: str, *quotes: str, confidence: float = 0.9) -> dict[str, Any]:
    evidence = [{"quote": q, "claim": "see quote"} for q in quotes]
    body = {"evidence": evidence, "verdict": verdict, "confidence": confidence, "critique": "ok"}
    return {"text": json.dumps(body)}


@pytest.mark.parametrize("api", FORMATS)
def test_a_grounded_verdict_is_a_valid_vote(scripted: StartScripted, api: str) -> None:
    server = scripted([reply("PASS", "41 passed in 3.21s", "a blank input gives an empty list")])
    vote = judge_dimension(server.client(api), "verification", INPUT)
    assert vote.verdict is not None and vote.error is None
    assert vote.verdict.valid is True and vote.verdict.verified_fraction == 1.0
    assert vote.verdict.judge_model == "judge-model"
    assert vote.usage.calls == 1 and vote.usage.input_tokens > 0


def test_fabricated_evidence_is_reasked_once_then_abstains(scripted: StartScripted) -> None:
    made_up = reply("PASS", "all 42 tests passed on the first try")
    server = scripted([made_up, made_up])
    vote = judge_dimension(server.client("chat"), "correctness", INPUT)
    assert vote.verdict is not None
    assert vote.verdict.valid is False and vote.verdict.retried is True
    assert vote.usage.calls == 2
    # The re-ask names the quote that was not found.
    second = server.bodies()[1]["messages"][-1]["content"]
    assert "all 42 tests passed on the first try" in second
    # An abstaining judge is left out of the panel: two valid votes decide.
    fair = judge_dimension(
        scripted([reply("FAIL", "41 passed in 3.21s")]).client("chat"), "correctness", INPUT
    )
    other = judge_dimension(
        scripted([reply("FAIL", "pytest -q → exit 0")]).client("anthropic"), "correctness", INPUT
    )
    outcome = panel_vote([vote.verdict, fair.verdict, other.verdict])  # type: ignore[list-item]
    assert outcome.n_valid == 2 and outcome.panel_verdict == "FAIL"


def test_a_judge_that_fixes_its_quotes_on_the_reask_counts(scripted: StartScripted) -> None:
    server = scripted(
        [reply("FAIL", "nothing was tested at all"), reply("PASS", "41 passed in 3.21s")]
    )
    vote = judge_dimension(server.client("responses"), "correctness", INPUT)
    assert vote.verdict is not None and vote.verdict.valid is True
    assert vote.verdict.verdict == "PASS" and vote.verdict.retried is True


def test_verification_pass_without_a_post_edit_run_abstains(scripted: StartScripted) -> None:
    server = scripted([reply("PASS", "a blank input gives an empty list")])
    vote = judge_dimension(server.client("anthropic"), "verification", INPUT)
    assert vote.verdict is not None and vote.verdict.valid is False


def test_malformed_json_is_repaired_once(scripted: StartScripted) -> None:
    server = scripted([{"text": "PASS, clearly. {not json"}, reply("FAIL", "41 passed in 3.21s")])
    vote = judge_dimension(server.client("chat"), "completeness", INPUT)
    assert vote.verdict is not None and vote.verdict.verdict == "FAIL"
    assert vote.usage.calls == 2


def test_malformed_twice_is_an_error_not_a_vote(scripted: StartScripted) -> None:
    server = scripted([{"text": "no json here"}, {"text": "still none"}])
    vote = judge_dimension(server.client("chat"), "completeness", INPUT)
    assert vote.verdict is None and vote.error


@pytest.mark.parametrize("api", FORMATS)
def test_rate_limited_then_answered(scripted: StartScripted, api: str) -> None:
    server = scripted(
        [{"http_error": {"status": 429, "times": 1}, **reply("PASS", "41 passed in 3.21s")}]
    )
    vote = judge_dimension(server.client(api, max_retries=2), "correctness", INPUT)
    assert vote.verdict is not None and vote.verdict.valid is True
    assert server.statuses() == [429, 200]


def test_provider_errors_after_retries_are_recorded(scripted: StartScripted) -> None:
    server = scripted([{"http_error": {"status": 500}}])
    vote = judge_dimension(server.client("anthropic", max_retries=1), "correctness", INPUT)
    assert vote.verdict is None and "500" in (vote.error or "")
    assert vote.usage.errors == 1


GOOD = Contestant("good", "## Final answer\nparse('') now returns [] and 41 passed in 3.21s")
BAD = Contestant("bad", "## Final answer\nI changed nothing and did not run the tests")


def pairwise_reply(slot: str) -> dict[str, Any]:
    body = {
        "evidence": [{"quote": "a blank input gives an empty list", "claim": "the task"}],
        "overall": slot,
        "per_dimension": {"correctness": slot},
    }
    return {"text": json.dumps(body)}


def prefers_good() -> dict[str, Any]:
    return {
        "rules": [
            {
                "when": {"regex": r"FIRST answer\n## Final answer\nparse"},
                "turns": [pairwise_reply("FIRST")],
            }
        ],
        "turns": [pairwise_reply("SECOND")],
    }


def test_position_swap_wins_need_both_orders_and_bias_is_flagged(scripted: StartScripted) -> None:
    fair = [
        scripted(prefers_good()).client(api, name=f"fair-{api}") for api in ("anthropic", "chat")
    ]
    biased = scripted([pairwise_reply("FIRST")]).client("responses", name="biased")
    verdict = compare_pair(
        [*fair, biased],
        case_key="c",
        test_id="c",
        task="Fix parse() so that a blank input gives an empty list.",
        a=BAD,
        b=GOOD,
        dimensions=["correctness"],
        seed=0,
    )
    assert verdict.winner == "good" and verdict.overall.verdict == "B"
    assert verdict.bias_detected is True
    readings = {r.judge: r for r in verdict.overall.readings}
    assert readings["biased"].position_following and readings["biased"].vote == "TIE"
    assert readings["fair-anthropic"].consistent and readings["fair-anthropic"].vote == "B"
    assert verdict.per_dimension[0].verdict == "B"
    assert verdict.judge_calls == 6

    # A biased judge alone wins nothing for anyone.
    alone = compare_pair(
        [scripted([pairwise_reply("FIRST")]).client("chat", name="biased")],
        case_key="c",
        test_id="c",
        task="Fix parse() so that a blank input gives an empty list.",
        a=GOOD,
        b=BAD,
        dimensions=["correctness"],
        seed=0,
    )
    assert alone.winner is None and alone.overall.verdict == "TIE" and alone.bias_detected


def test_ungrounded_pairwise_readings_are_invalid(scripted: StartScripted) -> None:
    made_up = {
        "text": json.dumps(
            {"evidence": [{"quote": "the second answer deleted the tests"}], "overall": "FIRST"}
        )
    }
    judge = scripted([made_up, made_up]).client("chat", name="liar")
    verdict = compare_pair(
        [judge], case_key="c", test_id="c", task="t", a=GOOD, b=BAD, dimensions=[], seed=0
    )
    reading = verdict.overall.readings[0]
    assert reading.r1 == "INVALID" and reading.vote is None
    assert verdict.overall.verdict == "TIE" and verdict.errors


def test_which_agent_goes_first_is_drawn_per_case() -> None:
    orders = {order_pair(f"case-{i}", "claude", "codex", seed=7) for i in range(20)}
    assert orders == {("claude", "codex"), ("codex", "claude")}
    assert order_pair("x", "claude", "codex", 7) == order_pair("x", "codex", "claude", 7)
