"""Model servers on 127.0.0.1 started per test, and their request logs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from evals_pipeline.model_server import ModelScript, ModelServer

FIXTURE_SCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "model-scripts"

StartServer = Callable[..., ModelServer]


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "requests.jsonl"


@pytest.fixture
def start(log_path: Path) -> Iterator[StartServer]:
    """Start a server for a script (a ModelScript, or its list/dict form); stopped after the test."""
    servers: list[ModelServer] = []

    def _start(script: ModelScript | list[Any] | dict[str, Any]) -> ModelServer:
        if not isinstance(script, ModelScript):
            script = ModelScript.model_validate(script)
        server = ModelServer(script, log_path=log_path).start()
        servers.append(server)
        return server

    yield _start
    for server in servers:
        server.stop()


def read_log(path: Path) -> list[dict[str, Any]]:
    """The request log's entries."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def replies(path: Path) -> list[dict[str, Any]]:
    """The log's `reply` entries of API requests (those that name a turn)."""
    return [e for e in read_log(path) if e["event"] == "reply" and "turn" in e]


def anthropic_client(server: ModelServer, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key="sk-test", max_retries=retries)


def openai_client(server: ModelServer, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="sk-test", max_retries=retries)
