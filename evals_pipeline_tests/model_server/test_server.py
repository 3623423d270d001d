"""ModelServer's lifecycle and `serve`, the blocking entry point of the CLI subcommand."""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.model_server import ModelScript, ModelServer, ScriptError, serve
from evals_pipeline_tests.model_server.conftest import FIXTURE_SCRIPTS, read_log
from evals_pipeline_tests.model_server.wire import claude_body, post

SCRIPT = ModelScript.model_validate([{"text": "hi"}])
PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]


def test_start_and_stop() -> None:
    server = ModelServer(SCRIPT)
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.port
    assert server.start() is server
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    with pytest.raises(RuntimeError, match="already started"):
        server.start()
    port = server.port
    assert post(port, "/v1/messages", claude_body(PROMPT))[0] == 200
    server.stop()
    server.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_fixed_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with ModelServer(SCRIPT, port=free) as server:
        assert server.port == free
        assert post(free, "/v1/messages", claude_body(PROMPT))[0] == 200


def test_stop_drops_idle_keep_alive_connections() -> None:
    server = ModelServer(SCRIPT).start()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.request("POST", "/v1/messages", body=json.dumps(claude_body(PROMPT, stream=False)))
    connection.getresponse().read()
    began = time.monotonic()
    server.stop()
    assert time.monotonic() - began < 1
    assert connection.sock is not None
    assert connection.sock.recv(1) == b""  # the server closed its end
    connection.close()


def test_serve_bad_script_raises_before_binding(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {}\n")
    with pytest.raises(ScriptError, match="turn 0"):
        serve(bad, host="127.0.0.1", port=0, log_path=None)


def model_server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "evals_pipeline.cli", "model-server", *args]


def test_the_command_serves_until_interrupted(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    script = str(FIXTURE_SCRIPTS / "hello.json")
    process = subprocess.Popen(
        model_server_command("--script", script, "--port", "0", "--log", str(log)),
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        match = re.fullmatch(
            r"model server on http://127\.0\.0\.1:(\d+) \(3 turns\) — Ctrl-C to stop\n", banner
        )
        assert match, banner
        port = int(match.group(1))
        status, _, _ = post(port, "/v1/messages", claude_body(PROMPT))
        assert status == 200
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=30)  # a loaded CI machine is slow to stop it
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, rest
    assert "POST /v1/messages → anthropic turn 0: Write" in rest
    assert [e["event"] for e in read_log(log)] == ["request", "reply"]


def test_the_command_refuses_a_bad_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- tool_calls: [{action: wrte_file}]\n")
    done = subprocess.run(
        model_server_command("--script", str(bad), "--port", "0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert str(bad) in done.stderr and "turn 0" in done.stderr
