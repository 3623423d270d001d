"""The JSONL request log: requests with redacted credentials, and what each reply resolved to."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from evals_pipeline.model_server import ModelScript, ModelServer
from evals_pipeline.model_server.log import redact_headers
from evals_pipeline_tests.model_server.conftest import StartServer, read_log
from evals_pipeline_tests.model_server.wire import CLAUDE_TOOL_NAMES, CWD, claude_body, post

SCRIPT = [
    {
        "tool_calls": [
            {"action": "write_file", "path": "a.py", "content": "A\n"},
            {"action": "bash", "command": "ls"},
        ]
    },
    {"text": "done"},
]
PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def test_request_and_reply_entries(start: StartServer, log_path: Path) -> None:
    server = start(SCRIPT)
    headers = {
        "x-api-key": "sk-ant-secret-1",
        "Authorization": "Bearer sk-secret-2",
        "x-claude-code-session-id": "sess-1",
    }
    post(server.port, "/v1/messages?beta=true", claude_body(PROMPT), headers)

    text = log_path.read_text()
    assert "sk-ant-secret-1" not in text and "sk-secret-2" not in text
    request, reply = read_log(log_path)
    assert request["event"] == "request" and reply["event"] == "reply"
    assert request["seq"] == reply["seq"]
    assert (request["method"], request["path"]) == ("POST", "/v1/messages?beta=true")
    assert request["headers"]["x-api-key"] == "[redacted]"
    assert request["headers"]["authorization"] == "[redacted]"
    assert request["headers"]["x-claude-code-session-id"] == "sess-1"
    assert request["body"] == claude_body(PROMPT)
    assert reply["api"] == "anthropic" and reply["status"] == 200 and reply["stream"] is True
    assert (reply["turn"], reply["script_turn"], reply["session"]) == (0, 0, "sess-1")
    assert reply["tools"] == CLAUDE_TOOL_NAMES
    assert reply["cwd"] == CWD
    assert [(c["name"], c["arguments"]) for c in reply["calls"]] == [
        ("Write", {"file_path": f"{CWD}/a.py", "content": "A\n"}),
        ("Bash", {"command": "ls", "description": "Run command"}),
    ]
    assert reply["calls"][1]["id"].startswith("toolu_fake_0_1_")
    assert reply["usage"]["input_tokens"] > 0


def test_redact_headers() -> None:
    headers = [
        ("X-Api-Key", "a"),
        ("authorization", "b"),
        ("api-key", "c"),
        ("x-goog-api-key", "d"),
        ("Cookie", "e"),
        ("x-auth-token", "f"),
        ("content-type", "application/json"),
        ("session-id", "s"),
    ]
    assert redact_headers(headers) == {
        "x-api-key": "[redacted]",
        "authorization": "[redacted]",
        "api-key": "[redacted]",
        "x-goog-api-key": "[redacted]",
        "cookie": "[redacted]",
        "x-auth-token": "[redacted]",
        "content-type": "application/json",
        "session-id": "s",
    }


def test_echo_prints_one_line_per_reply() -> None:
    echo = io.StringIO()
    with ModelServer(ModelScript.model_validate(SCRIPT), echo=echo) as server:
        post(server.port, "/v1/messages", claude_body(PROMPT))
        post(server.port, "/nowhere", {})
    lines = echo.getvalue().splitlines()
    assert lines == [
        "POST /v1/messages → anthropic turn 0: Write, Bash",
        "POST /nowhere → 404 unhandled",
    ]


def test_log_file_is_appended_and_its_folder_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "log.jsonl"
    for _ in range(2):
        with ModelServer(ModelScript.model_validate(SCRIPT), log_path=path) as server:
            post(server.port, "/v1/messages", claude_body(PROMPT))
    assert [e["event"] for e in read_log(path)] == ["request", "reply"] * 2
