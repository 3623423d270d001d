"""Script rules: replies chosen by the request's text, over the three APIs, and their errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from evals_pipeline.model_server import ModelScript
from evals_pipeline_tests.model_server.conftest import (
    StartServer,
    anthropic_client,
    openai_client,
    replies,
)
from evals_pipeline_tests.model_server.test_script import check_error
from evals_pipeline_tests.model_server.wire import CLAUDE_TOOLS

JUDGE: dict[str, Any] = {
    "side_requests": False,
    "rules": [
        {
            "when": {"contains": ["Dimension: correctness", "Answer A:"]},
            "turns": [{"text": "not json"}, {"text": '{"winner": "A"}'}],
        },
        {"when": {"regex": r"Dimension: (style|clarity)\b.*Answer B:"}, "turns": [{"text": "B"}]},
        {"when": {"not_contains": "Dimension:"}, "model": "rule-model", "turns": [{"text": "?"}]},
    ],
    "turns": [{"text": "fallback"}],
}


def test_choose_by_contains_regex_and_not_contains() -> None:
    script = ModelScript.model_validate(JUDGE)
    assert script.choose("Dimension: correctness\nAnswer A: x")[0] == 0
    assert script.choose("Answer A: x\n...Dimension: correctness")[0] == 0  # any order
    assert script.choose("Dimension: correctness only")[0] is None  # every string must occur
    assert script.choose("Dimension: style\nmany\nlines\nAnswer B: y")[0] == 1  # re.S
    assert script.choose("Dimension: stylish\nAnswer B: y")[0] is None  # the regex's \b
    assert script.choose("no dimension here") == (2, script.rules[2].turns, "rule-model")
    assert script.choose("Dimension: safety") == (None, script.turns, None)


def test_first_matching_rule_wins_and_not_contains_vetoes() -> None:
    script = ModelScript.model_validate(
        {
            "rules": [
                {
                    "when": {"contains": "x", "not_contains": ["veto", "stop"]},
                    "turns": [{"text": "a"}],
                },
                {"when": {"contains": "x"}, "turns": [{"text": "b"}]},
            ]
        }
    )
    assert script.choose("x")[0] == 0
    assert script.choose("x stop")[0] == 1
    assert script.choose("x veto")[0] == 1
    assert script.choose("y") == (None, [], None)


def test_anthropic_matches_the_system_prompt_and_text_blocks(
    start: StartServer, log_path: Path
) -> None:
    server = start(JUDGE)
    client = anthropic_client(server)
    message = client.messages.create(
        model="judge",
        max_tokens=50,
        system=[{"type": "text", "text": "Dimension: correctness"}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "Answer A: 42"}]}],
    )
    assert [b.text for b in message.content if b.type == "text"] == ["not json"]
    reask = client.messages.create(
        model="judge",
        max_tokens=50,
        system="Dimension: correctness",
        messages=[
            {"role": "user", "content": "Answer A: 42"},
            {"role": "assistant", "content": "not json"},
            {"role": "user", "content": "Reply with only the JSON object."},
        ],
    )
    assert [b.text for b in reask.content if b.type == "text"] == ['{"winner": "A"}']
    assert [(e["rule"], e["turn"]) for e in replies(log_path)] == [(0, 0), (0, 1)]


def test_responses_matches_instructions_and_input_items(start: StartServer) -> None:
    client = openai_client(start(JUDGE))
    response = client.responses.create(
        model="judge",
        instructions="Dimension: clarity",
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "Answer A: 1"}]},
            {"role": "user", "content": "Answer B: 2"},
        ],
    )
    assert response.output_text == "B"
    assert client.responses.create(model="judge", input="hello").output_text == "?"


def test_chat_matches_the_system_message_and_falls_back_to_turns(start: StartServer) -> None:
    client = openai_client(start(JUDGE))

    def ask(system: str, user: str) -> str | None:
        completion = client.chat.completions.create(
            model="judge",
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        )
        return completion.choices[0].message.content

    assert ask("Dimension: correctness", "Answer A: x") == "not json"
    assert ask("Dimension: safety", "Answer A: x") == "fallback"
    no_model = client.chat.completions.create(
        model="", messages=[{"role": "user", "content": "what?"}]
    )
    assert no_model.model == "rule-model"


def test_rules_apply_to_agent_requests_and_side_requests_stay_ok(start: StartServer) -> None:
    script = {
        "rules": [{"when": {"contains": "fix the bug"}, "turns": [{"text": "fixed"}]}],
        "turns": [{"text": "other"}],
    }
    client = anthropic_client(start(script))

    def ask(prompt: str, tools: list[dict[str, Any]]) -> list[str]:
        message = client.messages.create(
            model="m",
            max_tokens=50,
            messages=[{"role": "user", "content": prompt}],
            tools=tools,  # type: ignore[arg-type]
        )
        return [b.text for b in message.content if b.type == "text"]

    assert ask("please fix the bug", CLAUDE_TOOLS) == ["fixed"]
    assert ask("write a title", CLAUDE_TOOLS) == ["other"]
    assert ask("please fix the bug", []) == ["OK"]  # side_requests defaults to true


def test_error_attempts_are_counted_per_rule(start: StartServer, log_path: Path) -> None:
    flaky = {"http_error": {"status": 429, "times": 1}, "text": "after retry"}
    script = {
        "side_requests": False,
        "rules": [{"when": {"contains": "rule"}, "turns": [flaky]}],
        "turns": [flaky],
    }
    client = openai_client(start(script), retries=1)
    for prompt in ("rule", "rule", "plain"):
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": prompt}]
        )
        assert completion.choices[0].message.content == "after retry"
    statuses = [(e["status"], e.get("rule", "error")) for e in replies(log_path)]
    assert statuses == [(429, "error"), (200, 0), (200, 0), (429, "error"), (200, None)]


def test_rules_without_fallback_answer_an_unmatched_request_with_400(start: StartServer) -> None:
    script = {
        "side_requests": False,
        "rules": [{"when": {"contains": "x"}, "turns": [{"text": "ok"}]}],
    }
    client = openai_client(start(script))
    with pytest.raises(openai.BadRequestError, match="no script rule matches this request"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "y"}])


def test_rule_errors_name_the_rule_and_the_fix(tmp_path: Path) -> None:
    check_error(
        tmp_path,
        "rules:\n  - when: {regex: 'a(b'}\n    turns: [{text: x}]\n",
        "rule 0 (1st): when: `regex` 'a(b' is not a valid regular expression",
        "fix: fix the pattern",
    )
    check_error(
        tmp_path,
        "rules:\n  - when: {}\n    turns: [{text: x}]\n",
        "rule 0 (1st): when: `when` has no condition",
        "fix: give it `contains`, `regex` or `not_contains`",
    )
    check_error(
        tmp_path,
        "rules:\n  - when: {contain: x}\n    turns: [{text: x}]\n",
        "rule 0 (1st): when: unknown key `contain`",
        "allowed here: contains, regex, not_contains",
    )
    check_error(
        tmp_path,
        "rules:\n  - when: {contains: x}\n    turn: [{text: x}]\n",
        "rule 0 (1st): unknown key `turn`",
        "allowed here: when, turns, model",
    )
    check_error(
        tmp_path,
        "rules:\n  - when: {contains: x}\n    turns: []\n",
        "rule 0 (1st): the rule has no turns",
    )
    check_error(
        tmp_path,
        "rules:\n  - {when: {contains: x}, turns: [{text: a}]}\n"
        "  - {when: {contains: y}, turns: [{text: a}, {}]}\n",
        "rule 1 (2nd): turn 1 (2nd): the turn is empty",
    )
    check_error(
        tmp_path,
        "rules:\n  - {when: {contains: ['']}, turns: [{text: a}]}\n",
        "rule 0 (1st): when.contains[0]",
    )
    check_error(tmp_path, "rules:\n  - {turns: [{text: a}]}\n", "rule 0 (1st): `when` is required")
    check_error(tmp_path, "model: m\n", "the script has no turns", "or `rules:`")
