"""HTTP edge cases over raw http.client: encodings, chunked bodies, routing, keep-alive (8.1)."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import zlib
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline_tests.model_server.conftest import StartServer, read_log
from evals_pipeline_tests.model_server.wire import claude_body, pi_body, post

SCRIPT = [{"text": "hello there"}]
PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def text_of(raw: bytes) -> str:
    return "".join(block["text"] for block in json.loads(raw)["content"])


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate without zlib header
    ],
)
def test_compressed_request_bodies(start: StartServer, encoding: str, compress: object) -> None:
    server = start(SCRIPT)
    body = compress(json.dumps(claude_body(PROMPT, stream=False)).encode())  # type: ignore[operator]
    status, _, raw = post(server.port, "/v1/messages", body, {"Content-Encoding": encoding})
    assert status == 200
    assert text_of(raw) == "hello there"


def test_unsupported_and_broken_encodings(start: StartServer) -> None:
    server = start(SCRIPT)
    status, _, _ = post(server.port, "/v1/messages", b"x", {"Content-Encoding": "br"})
    assert status == 415
    status, _, raw = post(server.port, "/v1/messages", b"not gzip", {"Content-Encoding": "gzip"})
    assert status == 400
    assert "cannot decode the gzip body" in json.loads(raw)["error"]["message"]


def test_chunked_request_body(start: StartServer) -> None:
    server = start(SCRIPT)
    payload = json.dumps(claude_body(PROMPT, stream=False)).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    parts = [payload[i : i + 100] for i in range(0, len(payload), 100)]
    connection.request(
        "POST",
        "/v1/messages",
        body=iter(parts),
        headers={"Content-Type": "application/json"},
        encode_chunked=True,
    )
    response = connection.getresponse()
    assert response.status == 200
    assert text_of(response.read()) == "hello there"
    connection.close()


def test_keep_alive_serves_many_requests_on_one_connection(start: StartServer) -> None:
    server = start(SCRIPT)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.connect()
    sock: socket.socket | None = connection.sock
    for stream in (False, True, False):
        connection.request(
            "POST", "/v1/messages", body=json.dumps(claude_body(PROMPT, stream=stream))
        )
        response = connection.getresponse()
        assert response.status == 200
        response.read()
        assert connection.sock is sock  # not reconnected
    connection.close()


def test_paths_with_and_without_v1_and_query(start: StartServer) -> None:
    server = start(SCRIPT)
    for path in ("/v1/messages?beta=true", "/messages", "/messages?beta=true"):
        status, _, raw = post(server.port, path, claude_body(PROMPT, stream=False))
        assert (status, text_of(raw)) == (200, "hello there")
    for path in ("/v1/chat/completions", "/chat/completions"):
        status, _, raw = post(server.port, path, pi_body(PROMPT, stream=False))
        assert status == 200
        assert json.loads(raw)["choices"][0]["message"]["content"] == "hello there"


def request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request(method, path, headers=headers or {})
    response = connection.getresponse()
    result = response.status, response.read()
    connection.close()
    return result


def test_unknown_paths_are_logged_and_404(start: StartServer, log_path: Path) -> None:
    server = start(SCRIPT)
    assert request(server.port, "GET", "/v1/embeddings")[0] == 404
    status, raw = request(server.port, "POST", "/v1/completions")
    assert status == 404
    assert json.loads(raw)["error"]["type"] == "not_found_error"
    assert request(server.port, "GET", "/")[0] == 404
    unhandled = [(e["method"], e["path"]) for e in read_log(log_path) if e["event"] == "unhandled"]
    assert unhandled == [("GET", "/v1/embeddings"), ("POST", "/v1/completions"), ("GET", "/")]


def test_head_root_is_200_and_empty(start: StartServer) -> None:
    server = start(SCRIPT)
    assert request(server.port, "HEAD", "/") == (200, b"")


def test_models_in_both_shapes(start: StartServer) -> None:
    server = start({"model": "claude-test", "turns": SCRIPT})
    status, raw = request(server.port, "GET", "/v1/models", {"anthropic-version": "2023-06-01"})
    assert status == 200
    listing = json.loads(raw)
    assert listing["data"][0]["type"] == "model" and listing["data"][0]["id"] == "claude-test"
    assert (listing["has_more"], listing["first_id"], listing["last_id"]) == (
        False,
        "claude-test",
        "claude-test",
    )
    status, raw = request(server.port, "GET", "/models")
    openai_listing = json.loads(raw)
    assert openai_listing["object"] == "list"
    assert openai_listing["data"][0] | {"created": 0} == {
        "id": "claude-test",
        "object": "model",
        "created": 0,
        "owned_by": "evals-pipeline",
    }


def test_bad_bodies_get_a_400_in_the_api_shape(start: StartServer) -> None:
    server = start(SCRIPT)
    status, _, raw = post(server.port, "/v1/messages", b"{not json")
    assert status == 400
    assert json.loads(raw)["type"] == "error"
    status, _, raw = post(server.port, "/v1/chat/completions", {"messages": "nope"})
    assert status == 400
    assert json.loads(raw)["error"]["message"] == "`messages` must be a list"
    status, _, raw = post(server.port, "/v1/responses", {"input": 3})
    assert status == 400 and "input" in json.loads(raw)["error"]["message"]


def test_unresolvable_action_is_a_400_naming_turn_and_tools(start: StartServer) -> None:
    server = start([{"tool_calls": [{"action": "write_file", "path": "x", "content": "y"}]}])
    body = {**claude_body(PROMPT, stream=False), "tools": [{"name": "Read", "input_schema": {}}]}
    status, _, raw = post(server.port, "/v1/messages", body)
    assert status == 400
    message = json.loads(raw)["error"]["message"]
    assert "script turn 0: `write_file` needs one of the tools" in message
    assert message.endswith("the request declares: Read")
