"""Scripted model servers for LLM clients, and targets of each API format."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from evals_pipeline.llm import SdkClient, make_client, model_server_url
from evals_pipeline.model_server import ModelScript, ModelServer
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline_tests.model_server.conftest import read_log

FORMATS = ("anthropic", "chat", "responses")
"""anthropic Messages, OpenAI Chat Completions, OpenAI Responses."""

_TARGET = TypeAdapter[LlmTargetSpec](LlmTargetSpec)


def target(api: str, name: str = "judge", **fields: Any) -> LlmTargetSpec:
    """An LLM target speaking `api` (one of FORMATS) to model `judge-model`."""
    provider = {"provider": "anthropic"} if api == "anthropic" else {"provider": "openai"}
    if api != "anthropic":
        provider["api_format"] = api
    return _TARGET.validate_python({"name": name, "model": "judge-model", **provider, **fields})


@dataclass
class Scripted:
    """A started model server and its request log."""

    server: ModelServer
    log_path: Path

    def client(self, api: str, **fields: Any) -> SdkClient:
        """A client of a fresh `api` target pointed at this server (no retries by default)."""
        spec = target(api, **{"max_retries": 0, **fields})
        return make_client(spec, base_url=model_server_url(spec, self.server), api_key="sk-test")

    def log(self) -> list[dict[str, Any]]:
        """Every log entry, in the order written."""
        return read_log(self.log_path)

    def entries(self, event: str) -> list[dict[str, Any]]:
        """The log's entries of one kind (`request`, `reply`)."""
        return [e for e in self.log() if e["event"] == event]

    def bodies(self) -> list[dict[str, Any]]:
        """The bodies of the API requests the server received, in order."""
        return [e["body"] for e in self.entries("request")]

    def statuses(self) -> list[int]:
        """The status of each API reply, in order."""
        return [e["status"] for e in self.entries("reply")]


StartScripted = Callable[[list[Any] | dict[str, Any]], Scripted]


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[StartScripted]:
    """Start a judge's model server (no side requests) for a script; stopped after the test."""
    started: list[ModelServer] = []

    def _start(script: list[Any] | dict[str, Any]) -> Scripted:
        data = {"turns": script} if isinstance(script, list) else script
        parsed = ModelScript.model_validate({"side_requests": False, **data})
        log_path = tmp_path / f"server-{len(started)}.jsonl"
        server = ModelServer(parsed, log_path=log_path).start()
        started.append(server)
        return Scripted(server, log_path)

    yield _start
    for server in started:
        server.stop()
