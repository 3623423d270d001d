"""Anthropic and OpenAI clients over the real SDKs and HTTP: replies, usage, cost, retries, errors."""

from __future__ import annotations

import socket

import pytest

from evals_pipeline.llm import (
    AnthropicClient,
    LlmCallError,
    LlmClient,
    LlmConfigError,
    LlmRequest,
    OpenAIClient,
    make_client,
)
from evals_pipeline_tests.llm.conftest import FORMATS, StartScripted, target

PRICING = {"input": 3.0, "output": 15.0}
REQUEST = LlmRequest.ask("Is 2 + 2 = 4?", system="Answer yes or no.")


@pytest.mark.parametrize("api", FORMATS)
def test_reply_text_tokens_and_cost(api: str, scripted: StartScripted) -> None:
    usage = {"input_tokens": 1200, "output_tokens": 300}
    server = scripted([{"text": "Yes.", "usage": usage}])
    client: LlmClient = server.client(api, pricing=PRICING)

    reply = client.complete(REQUEST)

    assert (client.name, client.provider, client.model) == (
        "judge",
        "anthropic" if api == "anthropic" else "openai",
        "judge-model",
    )
    assert reply.text == "Yes."
    assert reply.model == "judge-model"
    assert (reply.input_tokens, reply.output_tokens) == (1200, 300)
    assert reply.cost_usd == pytest.approx((1200 * 3.0 + 300 * 15.0) / 1_000_000)
    assert reply.duration_ms >= 0
    assert server.statuses() == [200]


def test_no_pricing_no_cost(scripted: StartScripted) -> None:
    reply = scripted([{"text": "Yes."}]).client("chat").complete(REQUEST)
    assert reply.cost_usd is None
    assert reply.input_tokens > 0 and reply.output_tokens > 0  # the server's estimate


@pytest.mark.parametrize("api", FORMATS)
def test_request_shape_per_api(api: str, scripted: StartScripted) -> None:
    server = scripted([{"text": "a"}, {"text": "b"}])
    client = server.client(api, temperature=0.3, max_output_tokens=99)
    client.complete(REQUEST)
    client.complete(REQUEST.followed_by("a", "Sure?").model_copy(update={"temperature": 1.0}))

    first, second = server.bodies()
    assert first["model"] == "judge-model"
    assert [e["turn"] for e in server.entries("reply")] == [0, 1]
    if api == "anthropic":
        assert "temperature" not in first  # the API has no sampling parameters any more
        assert first["system"] == "Answer yes or no."
        assert first["max_tokens"] == 99
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
        return
    assert (first["temperature"], second["temperature"]) == (0.3, 1.0)
    if api == "chat":
        assert first["messages"][0] == {"role": "system", "content": "Answer yes or no."}
        assert first["max_completion_tokens"] == 99
    else:
        assert first["instructions"] == "Answer yes or no."
        assert (first["max_output_tokens"], first["store"]) == (99, False)
        assert [m["role"] for m in second["input"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize("api", FORMATS)
def test_429_once_is_retried_by_the_sdk(api: str, scripted: StartScripted) -> None:
    server = scripted([{"http_error": {"status": 429, "times": 1}, "text": "after the retry"}])
    client = server.client(api, max_retries=1)

    assert client.complete(REQUEST).text == "after the retry"
    assert server.statuses() == [429, 200]
    assert client.usage.calls == 1 and client.usage.errors == 0


@pytest.mark.parametrize("api", FORMATS)
def test_500_every_time_is_a_call_error(api: str, scripted: StartScripted) -> None:
    server = scripted([{"http_error": {"status": 500, "message": "the model fell over"}}])
    client = server.client(api, max_retries=1)

    with pytest.raises(LlmCallError) as caught:
        client.complete(REQUEST)

    error = caught.value
    assert (error.target, error.status) == ("judge", 500)
    assert "the model fell over" in error.message and "(after 1 retry)" in error.message
    assert str(error).startswith("LLM target 'judge': HTTP 500: ")
    assert server.statuses() == [500, 500]
    assert client.usage.errors == 1 and client.usage.calls == 0


def test_client_error_is_not_retried(scripted: StartScripted) -> None:
    server = scripted([{"http_error": {"status": 400, "message": "bad prompt"}}])
    with pytest.raises(LlmCallError, match="bad prompt") as caught:
        server.client("anthropic", max_retries=2).complete(REQUEST)
    assert caught.value.status == 400
    assert "retr" not in caught.value.message
    assert server.statuses() == [400]


@pytest.mark.parametrize("api", ["anthropic", "chat"])
def test_unreachable_server_is_a_call_error_without_status(api: str) -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = target(api, max_retries=0, timeout_seconds=5)
    client = make_client(spec, base_url=f"http://127.0.0.1:{port}", api_key="sk-test")
    with pytest.raises(LlmCallError, match=r"cannot connect to http://127\.0\.0\.1") as caught:
        client.complete(REQUEST)
    assert caught.value.status is None


@pytest.mark.parametrize(
    ("api", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("chat", "OPENAI_API_KEY")]
)
def test_missing_api_key_names_the_target_and_the_variable(
    api: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(LlmConfigError) as caught:
        make_client(target(api, name="panel-1"))
    message = str(caught.value)
    assert "'panel-1'" in message and variable in message and "api_key" in message

    make_client(target(api, api_key="sk-from-target"))  # the target's own key
    monkeypatch.setenv(variable, "sk-from-env")
    make_client(target(api))  # the environment's
    # A scripted target needs none.
    monkeypatch.delenv(variable)
    make_client(target(api, model_server={"script": "judge.yaml"}))


def test_the_key_never_appears_in_errors(
    scripted: StartScripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-very-secret-key-123456"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    server = scripted([{"http_error": {"status": 401, "message": "invalid x-api-key"}}])
    spec = target("anthropic", max_retries=0)
    client = make_client(spec, base_url=server.server.base_url)
    with pytest.raises(LlmCallError) as caught:
        client.complete(REQUEST)
    assert caught.value.status == 401
    assert secret not in str(caught.value) and secret not in repr(caught.value)
    assert caught.value.__cause__ is None  # the SDK error (with the request headers) is dropped
    assert secret not in server.log_path.read_text()  # the server log redacts it too


def test_clients_are_of_the_provider_class() -> None:
    assert isinstance(make_client(target("anthropic", api_key="k")), AnthropicClient)
    openai_client = make_client(target("responses", api_key="k"))
    assert isinstance(openai_client, OpenAIClient) and openai_client.api_format == "responses"
