"""LlmClients: a model server per scripted target, clients by name, usage, and clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from evals_pipeline.llm import LlmClients, LlmConfigError, LlmRequest, complete_structured
from evals_pipeline.model_server import ScriptError
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline_tests.llm.conftest import target
from evals_pipeline_tests.model_server.conftest import read_log

JUDGE_SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "when": {"contains": "Dimension: correctness"},
            "turns": [{"text": '{"verdict": "PASS"}'}],
        },
        {"when": {"contains": "Dimension: style"}, "turns": [{"text": '{"verdict": "FAIL"}'}]},
    ],
    "turns": [{"text": "not JSON"}, {"text": '{"verdict": "ABSTAIN"}'}],
}


class Verdict(BaseModel):
    verdict: str


def write_script(tmp_path: Path, data: Any, name: str = "judge.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def ask(dimension: str) -> LlmRequest:
    return LlmRequest.ask("Answer A: 42", system=f"Dimension: {dimension}")


@pytest.fixture
def targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, LlmTargetSpec]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    script = {"script": write_script(tmp_path, JUDGE_SCRIPT)}
    return {
        "claude-judge": target("anthropic", name="claude-judge", model_server=script),
        "gpt-judge": target("responses", name="gpt-judge", model_server=script),
        "real": target("anthropic", name="real"),
    }


def test_scripted_targets_answer_by_content(
    targets: dict[str, LlmTargetSpec], tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    with LlmClients(targets, log_dir=logs) as clients:
        assert clients.names == ["claude-judge", "gpt-judge", "real"]
        for name in ("claude-judge", "gpt-judge"):
            client = clients.get(name)
            assert clients.get(name) is client  # made once
            assert complete_structured(client, ask("correctness"), Verdict).value == Verdict(
                verdict="PASS"
            )
            assert complete_structured(client, ask("style"), Verdict).value == Verdict(
                verdict="FAIL"
            )
            fallback = complete_structured(client, ask("safety"), Verdict)
            assert fallback.repaired and fallback.value == Verdict(verdict="ABSTAIN")
        server = clients.server("claude-judge")
        assert server is not None and clients.server("real") is None
    usage = clients.usage()
    assert set(usage) == {"claude-judge", "gpt-judge"}
    assert usage["claude-judge"].calls == 4 and usage["claude-judge"].errors == 0
    assert clients.server("claude-judge") is None  # stopped
    for name in ("claude-judge", "gpt-judge"):
        replies = [
            e for e in read_log(logs / f"{name}.model_server.jsonl") if e["event"] == "reply"
        ]
        assert [e["rule"] for e in replies] == [0, 1, None, None]


def test_a_target_without_a_key_fails_only_when_asked_for(
    targets: dict[str, LlmTargetSpec],
) -> None:
    with LlmClients(targets) as clients:
        with pytest.raises(LlmConfigError, match=r"'real'.*ANTHROPIC_API_KEY"):
            clients.get("real")
        clients.get("claude-judge")


def test_unknown_names_list_the_known_ones(targets: dict[str, LlmTargetSpec]) -> None:
    with LlmClients(targets) as clients, pytest.raises(KeyError) as caught:
        clients.get("gpt-5")
    assert "no LLM target named 'gpt-5'; known: claude-judge, gpt-judge, real" in str(caught.value)


def test_clients_are_used_inside_the_block_only(targets: dict[str, LlmTargetSpec]) -> None:
    clients = LlmClients(targets)
    with pytest.raises(RuntimeError, match="inside `with LlmClients"):
        clients.get("claude-judge")


def test_a_bad_script_fails_on_enter_and_starts_nothing(
    targets: dict[str, LlmTargetSpec], tmp_path: Path
) -> None:
    bad = write_script(tmp_path, [{"txt": "typo"}], name="bad.yaml")
    broken = {**targets, "broken": target("chat", name="broken", model_server={"script": bad})}
    clients = LlmClients(broken)
    with pytest.raises(ScriptError, match=r"bad\.yaml: turn 0 \(1st\): unknown key `txt`"):
        clients.__enter__()
    assert all(clients.server(name) is None for name in broken)
