"""Injected HTTP errors: body per API, every attempt or only the first N per session (8.9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from evals_pipeline.model_server.exchange import find_cwd, session_key
from evals_pipeline_tests.model_server.conftest import (
    StartServer,
    anthropic_client,
    openai_client,
    read_log,
)
from evals_pipeline_tests.model_server.wire import claude_body, codex_body, pi_body, post

PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
CODEX_PROMPT: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "hi"}]


def test_anthropic_error_fails_every_attempt(start: StartServer) -> None:
    server = start([{"http_error": {"status": 400, "message": "prompt is too long"}}])
    for _ in range(2):
        status, headers, raw = post(server.port, "/v1/messages", claude_body(PROMPT))
        assert status == 400
        assert headers["request-id"].startswith("req_")
        assert json.loads(raw) == {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        }
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client(server).messages.create(
            **claude_body(PROMPT, stream=False) | {"max_tokens": 10, "model": "claude-test"}
        )
    assert caught.value.status_code == 400
    assert "prompt is too long" in str(caught.value)


@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/responses", codex_body(CODEX_PROMPT)), ("/v1/chat/completions", pi_body(PROMPT))],
)
def test_openai_error_body(start: StartServer, path: str, body: dict[str, Any]) -> None:
    server = start([{"http_error": {"status": 529}}])
    status, _, raw = post(server.port, path, body)
    assert status == 529
    error = json.loads(raw)["error"]
    assert error == {
        "type": "overloaded_error",
        "message": "scripted HTTP 529 error (turn 0)",
        "code": "overloaded_error",
        "param": None,
    }


def test_error_at_a_later_turn_only(start: StartServer) -> None:
    server = start(
        [
            {"tool_calls": [{"action": "bash", "command": "ls"}]},
            {"http_error": {"status": 500, "type": "server_error"}},
        ]
    )
    client = openai_client(server)
    first = client.chat.completions.create(**pi_body(PROMPT, stream=False))
    assert first.choices[0].finish_reason == "tool_calls"
    history: list[dict[str, Any]] = [
        *PROMPT,
        {"role": "assistant", "content": None},
        {"role": "tool", "tool_call_id": "x", "content": ""},
    ]
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(**pi_body(history, stream=False))
    assert caught.value.status_code == 500
    assert isinstance(caught.value.body, dict) and caught.value.body["type"] == "server_error"


RECOVERING = [
    {"http_error": {"status": 529, "times": 2}, "text": "recovered"},
]


def attempt(port: int, api: str, session: str) -> int:
    if api == "anthropic":
        headers = {"x-claude-code-session-id": session}
        return post(port, "/v1/messages", claude_body(PROMPT, stream=False), headers)[0]
    if api == "responses":
        return post(
            port, "/v1/responses", codex_body(CODEX_PROMPT, stream=False), {"session-id": session}
        )[0]
    # pi sends no session header: the first user message tells runs apart
    prompt = [{"role": "user", "content": f"task {session}"}]
    return post(port, "/v1/chat/completions", pi_body(prompt, stream=False))[0]


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_times_fails_the_first_attempts_per_session(
    start: StartServer, api: str, log_path: Path
) -> None:
    server = start(RECOVERING)
    assert [attempt(server.port, api, "A") for _ in range(2)] == [529, 529]
    assert attempt(server.port, api, "B") == 529  # another session has its own count
    assert [attempt(server.port, api, "A") for _ in range(2)] == [200, 200]
    assert [attempt(server.port, api, "B") for _ in range(2)] == [529, 200]
    attempts = [e["error"]["attempt"] for e in read_log(log_path) if "error" in e]
    assert attempts == [1, 2, 1, 2]


def test_sdk_retry_recovers(start: StartServer, log_path: Path) -> None:
    server = start(
        [
            {"http_error": {"status": 529, "times": 1}, "text": "recovered"},
        ]
    )
    client = anthropic_client(server, retries=2)
    params: dict[str, Any] = {
        "messages": PROMPT,
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    }
    message = client.messages.create(model="m", max_tokens=10, **params)
    assert [b.text for b in message.content if b.type == "text"] == ["recovered"]
    statuses = [e["status"] for e in read_log(log_path) if e["event"] == "reply"]
    assert statuses == [529, 200]


def test_session_key_sources() -> None:
    text_block = [{"type": "text", "text": "Do it"}]
    cached = [{"type": "text", "text": "Do it", "cache_control": {"type": "ephemeral"}}]
    # pi's Messages requests mark the newest user message for caching: same run, same key.
    assert session_key({}, text_block, "/w/1") == session_key({}, cached, "/w/1")
    assert session_key({}, "Do it", "/w/1") == session_key({}, text_block, "/w/1")
    # Parallel runs of one task differ in their fresh work dir.
    assert session_key({}, text_block, "/w/1") != session_key({}, text_block, "/w/2")
    assert session_key({"session_id": "pi-1"}, text_block, None) == "pi-1"
    assert session_key({"session-id": "codex-1"}, text_block, None) == "codex-1"
    assert session_key({"x-claude-code-session-id": "claude-1"}, text_block, None) == "claude-1"
    # An agent added later names its session its own way: no table of agents to extend.
    added = {"user-agent": "echo/1", "x-echo-agent-session-id": "echo-1"}
    assert session_key(added, text_block, None) == "echo-1"
    assert session_key({"x-session-idle": "30"}, text_block, "/w/1").startswith("prompt-")


def test_the_working_directory_is_found_by_its_wording_not_by_agent() -> None:
    claude = "# Environment\n - Primary working directory: /w/claude\n - Is a git repository: true"
    codex = "<environment_context>\n  <cwd>/w/codex</cwd>\n</environment_context>"
    pi = "You are an expert coding assistant.\nCurrent working directory: /w/pi"
    added = "You are echo.\nWorking directory: /w/echo  \nToday: Sunday"  # an installed agent's
    assert [find_cwd(text) for text in (claude, codex, pi, added)] == [
        "/w/claude",
        "/w/codex",
        "/w/pi",
        "/w/echo",
    ]
    # The tag first, then the parts in order; a directory only mentioned is no statement.
    assert find_cwd("Current working directory: /w/a", [{"text": codex}]) == "/w/codex"
    assert find_cwd("work in your current working directory", "no cwd here") is None


def test_runs_without_session_header_fail_independently_by_work_dir(start: StartServer) -> None:
    server = start(RECOVERING)

    def attempt_in(cwd: str) -> int:
        body = pi_body(PROMPT, stream=False)
        body["messages"][0] = {"role": "system", "content": f"Current working directory: {cwd}"}
        return post(server.port, "/v1/chat/completions", body)[0]

    assert [attempt_in("/w/1"), attempt_in("/w/2"), attempt_in("/w/1"), attempt_in("/w/2")] == [
        529,
        529,
        529,
        529,
    ]
    assert [attempt_in("/w/1"), attempt_in("/w/2")] == [200, 200]
