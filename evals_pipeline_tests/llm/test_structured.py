"""complete_structured: lenient JSON extraction, strict validation, one re-ask, no exceptions."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from evals_pipeline.llm import (
    LlmRequest,
    ReplyProblem,
    complete_structured,
    extract_json,
    parse_reply,
)
from evals_pipeline_tests.llm.conftest import FORMATS, StartScripted

VALID = '{"score": 4, "reason": "covers the edge case"}'
REQUEST = LlmRequest.ask("Grade the answer.", system="Reply with a JSON object.")


class Grade(BaseModel):
    score: int
    reason: str


@pytest.mark.parametrize("api", FORMATS)
def test_malformed_then_valid_is_repaired(api: str, scripted: StartScripted) -> None:
    server = scripted([{"text": '{"score": 4, "reason": '}, {"text": VALID}])
    result = complete_structured(server.client(api), REQUEST, Grade)

    assert result.value == Grade(score=4, reason="covers the edge case")
    assert result.repaired and result.ok and result.error is None
    assert result.usage.calls == 2 and result.usage.errors == 0
    assert result.texts == ('{"score": 4, "reason": ', VALID)
    reask = json.dumps(server.bodies()[1])
    assert "the reply's JSON is invalid" in reask
    assert "Reply with only the JSON object, no prose." in reask


def test_malformed_twice_gives_no_value_and_the_problem(scripted: StartScripted) -> None:
    server = scripted([{"text": "I think it is a 4."}, {"text": "Still a 4, honestly."}])
    result = complete_structured(server.client("chat"), REQUEST, Grade)

    assert result.value is None and not result.repaired
    assert result.error == "no valid Grade in 2 replies: the reply contains no JSON object"
    assert result.usage.calls == 2
    assert server.statuses() == [200, 200]


def test_a_missing_field_is_sent_back_and_repaired(scripted: StartScripted) -> None:
    server = scripted([{"text": '{"score": 4}'}, {"text": f"Sure:\n```json\n{VALID}\n```"}])
    result = complete_structured(server.client("anthropic"), REQUEST, Grade)

    assert result.value is not None and result.value.reason == "covers the edge case"
    assert result.repaired
    messages = server.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == '{"score": 4}'
    assert "`reason`: Field required" in messages[2]["content"]


def test_a_valid_first_reply_costs_one_call(scripted: StartScripted) -> None:
    server = scripted([{"text": f"Here it is: {VALID} -- hope that helps", "usage": {}}])
    result = complete_structured(server.client("responses"), REQUEST, Grade)
    assert result.value is not None and not result.repaired
    assert result.usage.calls == 1 and len(result.replies) == 1


def test_repairs_zero_never_reasks(scripted: StartScripted) -> None:
    server = scripted([{"text": "nope"}, {"text": VALID}])
    result = complete_structured(server.client("chat"), REQUEST, Grade, repairs=0)
    assert result.value is None and result.error is not None and "1 reply:" in result.error
    assert server.statuses() == [200]


def test_an_empty_reply_is_reasked_with_a_placeholder(scripted: StartScripted) -> None:
    server = scripted([{"text": ""}, {"text": VALID}])
    result = complete_structured(server.client("anthropic"), REQUEST, Grade)
    assert result.repaired
    assert server.bodies()[1]["messages"][1]["content"] == "(empty reply)"


def test_a_call_error_is_reported_not_raised(scripted: StartScripted) -> None:
    server = scripted([{"http_error": {"status": 503, "message": "overloaded"}}])
    result = complete_structured(server.client("chat"), REQUEST, Grade)
    assert result.value is None
    assert result.error is not None and "HTTP 503" in result.error and "overloaded" in result.error
    assert (result.usage.calls, result.usage.errors) == (0, 1)


def test_a_failed_reask_keeps_the_first_reply_usage(scripted: StartScripted) -> None:
    server = scripted([{"text": "nope"}, {"http_error": {"status": 500}}])
    result = complete_structured(server.client("chat"), REQUEST, Grade)
    assert result.value is None and result.error is not None and "HTTP 500" in result.error
    assert (result.usage.calls, result.usage.errors) == (1, 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Sure!\n```\n{"a": 1}\n```\nAnything else?', {"a": 1}),
        ('The answer is {"a": {"b": [1, 2]}}.', {"a": {"b": [1, 2]}}),
        ('```python\nx = 1\n```\n{"a": 1}', {"a": 1}),  # another language's block is not it
    ],
)
def test_extract_json(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_extract_json_problems() -> None:
    with pytest.raises(ReplyProblem, match="no JSON object"):
        extract_json("no braces here")
    with pytest.raises(ReplyProblem, match=r"invalid: Expecting .* \(line 1, column \d+\)"):
        extract_json('{"a": 1,,}')
    with pytest.raises(ReplyProblem, match=r"invalid: Expecting value \(line 1, column 7\)"):
        extract_json('So: {"a": ')


def test_parse_reply_lists_the_schema_errors_briefly() -> None:
    with pytest.raises(ReplyProblem) as caught:
        parse_reply('{"score": "high"}', Grade)
    assert str(caught.value) == (
        "the JSON object does not match the expected fields: "
        "`score`: Input should be a valid integer, unable to parse string as an integer; "
        "`reason`: Field required"
    )
