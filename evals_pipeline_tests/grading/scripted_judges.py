"""Scripted judges for LLM grader tests: an LLM target answered by a model server started from a
script, and what its request log shows the grader sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from evals_pipeline.grading import grade_trial
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline_tests.grading.conftest import CaseFactory
from evals_pipeline_tests.model_server.conftest import read_log

PASS = {"score": 0.9, "assertions": [{"text": "greets", "passed": True, "evidence": "Hello"}]}


def reply(data: dict[str, Any], **usage: int) -> dict[str, Any]:
    turn: dict[str, Any] = {"text": json.dumps(data)}
    if usage:
        turn["usage"] = usage
    return turn


def judge(
    tmp_path: Path,
    turns: list[dict[str, Any]] | None = None,
    *,
    name: str = "judge",
    provider: str = "anthropic",
    rules: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An LLM target answered by a scripted model server (the script written to tmp_path)."""
    script: dict[str, Any] = {"turns": turns or []}
    if rules:
        script["rules"] = rules
    path = tmp_path / f"{name}.script.yaml"
    path.write_text(yaml.safe_dump(script))
    spec: dict[str, Any] = {
        "name": name,
        "provider": provider,
        "model": f"{name}-model",
        "max_retries": 0,
        "model_server": {"script": str(path)},
        **fields,
    }
    return spec


def judged_case(
    make_case: CaseFactory, spec: dict[str, Any], assertions: list[dict[str, Any]], **fields: Any
) -> ResolvedCase:
    return make_case(
        assertions, grader_target=spec["name"], llm_targets={spec["name"]: spec}, **fields
    )


def grade(case: ResolvedCase, session: Any, logs: Path) -> Any:
    with LlmClients(case.llm_targets, log_dir=logs) as clients:
        return grade_trial(case, session, llm=clients)


def requests(logs: Path, name: str = "judge") -> list[dict[str, Any]]:
    """The bodies of the API requests a scripted judge received."""
    entries = read_log(logs / f"{name}.model_server.jsonl")
    return [e["body"] for e in entries if e["event"] == "request"]


def texts(body: dict[str, Any]) -> str:
    """Every string in a request body, joined: system prompt and messages alike."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in body.items() if k in ("system", "messages", "input", "instructions")})
    return "\n".join(found)
