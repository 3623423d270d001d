"""Builders for real cases and sessions: sessions get a real Parquet transcript on disk."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import GraderResult, TrialGrade
from evals_pipeline.models.messages import Message, final_answer
from evals_pipeline.models.session import Session
from evals_pipeline.storage.messages import write_messages
from evals_pipeline_tests.llm.conftest import scripted

__all__ = ["scripted"]  # the scripted judge servers, shared with the LLM client tests

CaseFactory = Callable[..., ResolvedCase]
SessionFactory = Callable[..., Session]


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    """A resolved case with the given assertions (dicts as written in a suite)."""

    def make(assertions: list[dict[str, Any]] | tuple[()] = (), **overrides: Any) -> ResolvedCase:
        fields: dict[str, Any] = {
            "suite": "judges",
            "suite_path": str(tmp_path / "judges.eval.yaml"),
            "case_key": "case-1",
            "test_id": "case-1",
            "agent": "mock",
            "target": {"name": "mock", "provider": "mock"},
            "input": [{"role": "user", "content": "Say hello."}],
            "prompt": "Say hello.",
            "criteria": "Greets the user.",
            "base_dir": str(tmp_path),
            "assertions": list(assertions),
        }
        return ResolvedCase.model_validate({**fields, **overrides})

    return make


@pytest.fixture
def make_session(tmp_path: Path) -> SessionFactory:
    """A session whose messages are written as Parquet; `output` defaults to the final answer."""
    counter = itertools.count()

    def make(messages: list[Message] | None = None, **overrides: Any) -> Session:
        if messages is None:
            messages = [
                Message(role="user", content="Say hello."),
                Message(role="assistant", content="Hello, world!"),
            ]
        path = write_messages(messages, tmp_path / "sessions" / f"s{next(counter)}.parquet")
        fields: dict[str, Any] = {
            "case_key": "case-1",
            "agent": "mock",
            "messages_path": str(path),
            "message_count": len(messages),
            "output": final_answer(messages),
            "duration_ms": 1200,
            "start_ms": 1_700_000_000_000,
            "end_ms": 1_700_000_001_200,
        }
        return Session.model_validate({**fields, **overrides})

    return make


def only_grader(trial: TrialGrade) -> GraderResult:
    """The single grader of a one-assertion trial."""
    assert len(trial.graders) == 1, trial
    return trial.graders[0]


def python_grader(tmp_path: Path, name: str, source: str) -> list[str]:
    """Write a Python grader script and return its argv, run by this interpreter."""
    script = tmp_path / name
    script.write_text(source)
    return [sys.executable, str(script)]
