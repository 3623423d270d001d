"""The target proxy (AgentV §6.4) over real HTTP, and real code-grader processes that use it."""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter

from evals_pipeline.grader import TargetClient, TargetProxyError
from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.code_grader.target_proxy import TOKEN_ENV, URL_ENV, TargetProxy
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline_tests.grading.conftest import (
    CaseFactory,
    SessionFactory,
    only_grader,
    python_grader,
)

SCRIPT = {
    "rules": [
        {"when": {"contains": "Is this polite?"}, "turns": [{"text": "yes, it is polite"}]},
        {"when": {"contains": "fail me"}, "turns": [{"http_error": {"status": 500}}]},
    ],
    "turns": [{"text": "plain answer", "usage": {"input_tokens": 7, "output_tokens": 3}}],
}


def llm_target(tmp_path: Path, name: str, **fields: Any) -> dict[str, Any]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(SCRIPT))
    return {
        "name": name,
        "provider": "anthropic",
        "model": f"{name}-model",
        "max_retries": 0,
        "model_server": {"script": str(path)},
        **fields,
    }


@pytest.fixture
def targets(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {"judge": llm_target(tmp_path, "judge"), "other": llm_target(tmp_path, "other")}


@pytest.fixture
def clients(targets: dict[str, dict[str, Any]]) -> Iterator[LlmClients]:
    specs = {
        name: TypeAdapter[LlmTargetSpec](LlmTargetSpec).validate_python(spec)
        for name, spec in targets.items()
    }
    with LlmClients(specs) as started:
        yield started


def proxy_for(clients: LlmClients, max_calls: int = 50) -> TargetProxy:
    return TargetProxy(
        clients, default_target="judge", available=["judge", "other"], max_calls=max_calls
    )


def raw(
    url: str, method: str = "GET", body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    """Status and JSON body of one request, errors included."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_info_and_invoke(clients: LlmClients) -> None:
    with proxy_for(clients, max_calls=5) as proxy:
        assert proxy.url.startswith("http://127.0.0.1:")
        client = TargetClient(proxy.url, proxy.token)
        assert client.info() == {
            "targetName": "judge",
            "maxCalls": 5,
            "callCount": 0,
            "availableTargets": ["judge", "other"],
        }
        answer = client.invoke("Is this polite? Hello!", system_prompt="Answer yes or no.")
        assert answer == {
            "output": [{"role": "assistant", "content": "yes, it is polite"}],
            "rawText": "yes, it is polite",
            "tokenUsage": answer["tokenUsage"],
        }
        assert set(answer["tokenUsage"]) == {"input", "output"}
        other = client.invoke("anything", target="other")
        assert other["rawText"] == "plain answer"
        assert other["tokenUsage"] == {"input": 7, "output": 3}
        assert client.info()["callCount"] == 2
        assert (proxy.call_count, proxy.usage.calls) == (2, 2)
        assert proxy.usage.input_tokens >= 7


def test_it_listens_on_loopback_only(clients: LlmClients) -> None:
    with proxy_for(clients) as proxy:
        assert proxy._served is not None
        assert proxy._served.server.server_address[0] == "127.0.0.1"
        assert proxy.env() == {URL_ENV: proxy.url, TOKEN_ENV: proxy.token}
        assert len(proxy.token) >= 32
    with proxy_for(clients) as second:
        assert second.token != proxy.token  # a fresh token per invocation


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_every_endpoint_needs_the_token(clients: LlmClients, token: str | None) -> None:
    with proxy_for(clients) as proxy:
        assert raw(f"{proxy.url}/info", token=token) == (401, {"error": "Unauthorized"})
        invoke = raw(f"{proxy.url}/invoke", "POST", {"question": "hi"}, token=token)
        assert invoke == (401, {"error": "Unauthorized"})
        batch = raw(f"{proxy.url}/invokeBatch", "POST", {"requests": []}, token=token)
        assert batch == (401, {"error": "Unauthorized"})
        assert proxy.call_count == 0


def test_max_calls_then_429(clients: LlmClients) -> None:
    with proxy_for(clients, max_calls=2) as proxy:
        client = TargetClient(proxy.url, proxy.token)
        client.invoke("one")
        client.invoke("two")
        with pytest.raises(TargetProxyError) as caught:
            client.invoke("three")
        assert caught.value.status == 429
        assert "max_calls (2) reached" in str(caught.value)
        assert proxy.call_count == 2


def test_unknown_target_and_bad_requests_are_400(clients: LlmClients) -> None:
    with proxy_for(clients) as proxy:
        client = TargetClient(proxy.url, proxy.token)
        with pytest.raises(TargetProxyError) as caught:
            client.invoke("hi", target="nope")
        assert caught.value.status == 400
        assert "unknown target 'nope'; available: judge, other" in str(caught.value)
        status, body = raw(f"{proxy.url}/invoke", "POST", {"question": ""}, token=proxy.token)
        assert (status, body["error"]) == (400, "'question' must be a non-empty string")
        assert raw(f"{proxy.url}/nowhere", token=proxy.token)[0] == 404
        assert proxy.call_count == 0


def test_a_failed_model_call_is_502_and_counted(clients: LlmClients) -> None:
    with proxy_for(clients) as proxy:
        status, body = raw(f"{proxy.url}/invoke", "POST", {"question": "fail me"}, proxy.token)
        assert status == 502 and "HTTP 500" in body["error"]
        assert proxy.call_count == 1
        assert (proxy.usage.calls, proxy.usage.errors) == (0, 1)


def test_invoke_batch(clients: LlmClients) -> None:
    with proxy_for(clients, max_calls=4) as proxy:
        client = TargetClient(proxy.url, proxy.token)
        responses = client.invoke_batch(
            [
                "Is this polite? Yes.",
                {"question": "plain", "system_prompt": "Be brief.", "target": "other"},
                {"question": "x", "target": "nope"},
                {"question": "fail me"},
            ]
        )
        assert [r["rawText"] for r in responses[:2]] == ["yes, it is polite", "plain answer"]
        assert responses[0]["output"] == [{"role": "assistant", "content": "yes, it is polite"}]
        assert responses[2] == {
            "output": [],
            "rawText": "Error: unknown target 'nope'; available: judge, other",
        }
        assert responses[3]["output"] == [] and responses[3]["rawText"].startswith("Error: ")
        assert "HTTP 500" in responses[3]["rawText"]
        assert proxy.call_count == 3  # the unknown target was never called
        with pytest.raises(TargetProxyError) as caught:
            client.invoke_batch(["a", "b"])  # 3 used + 2 > 4
        assert caught.value.status == 429
        assert proxy.call_count == 3


def test_target_client_from_env_says_what_is_missing() -> None:
    with pytest.raises(TargetProxyError) as caught:
        TargetClient.from_env({})
    assert str(caught.value).startswith(
        "AGENTV_TARGET_PROXY_URL and AGENTV_TARGET_PROXY_TOKEN not set: the target proxy is only "
        "given to a code-grader whose assertion has `target: true`"
    )
    client = TargetClient.from_env({URL_ENV: "http://127.0.0.1:1/", TOKEN_ENV: "t"})
    assert (client.url, client.token) == ("http://127.0.0.1:1", "t")


GRADER = """\
import os
import sys

from evals_pipeline.grader import GraderInput, Score, TargetClient, grader


@grader
def check(inp: GraderInput) -> Score:
    client = TargetClient.from_env()
    info = client.info()
    reply = client.invoke("Is this polite? " + inp.output, system_prompt="Answer yes or no.")
    batch = client.invoke_batch(["one", {"question": "two", "target": "other"}])
    polite = reply["rawText"].lower().startswith("yes")
    secrets = sorted(
        name for name, value in os.environ.items() if "KEY" in name or "sk-" in value
    )
    return Score(
        1.0 if polite else 0.0,
        [("the judge finds it polite", polite, reply["rawText"])],
        {
            "info": info,
            "batch": [r["rawText"] for r in batch],
            "secrets": secrets,
            "env": sorted(os.environ),
            "url": os.environ["AGENTV_TARGET_PROXY_URL"],
        },
    )
"""


def test_a_code_grader_asks_the_judge_through_the_proxy(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    targets: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-parent-secret")
    targets["judge"]["api_key"] = "sk-target-secret"
    command = python_grader(tmp_path, "proxy_grader.py", GRADER)
    case = make_case(
        [{"type": "code-grader", "command": command, "target": {"max_calls": 5}}],
        grader_target="judge",
        llm_targets=targets,
    )
    with LlmClients(case.llm_targets) as clients:
        trial = grade_trial(case, make_session(), llm=clients)
    result = only_grader(trial)
    assert (result.verdict, result.score) == ("pass", 1.0), result.error or result.stderr
    assert result.assertions[0].evidence == "yes, it is polite"
    details = result.details or {}
    assert details["target_proxy"] == {"call_count": 3, "max_calls": 5}
    assert details["info"]["targetName"] == "judge"
    assert details["info"]["availableTargets"] == ["judge", "other"]
    assert details["batch"] == ["plain answer", "plain answer"]
    # Only the proxy's URL and one-time token reach the grader, never an API key.
    assert details["secrets"] == []
    assert {URL_ENV, TOKEN_ENV} <= set(details["env"])
    assert result.judge_usage is not None and result.judge_usage.calls == 3
    assert trial.judge_usage == result.judge_usage
    assert trial.token_usage is None  # the agent's usage is not the judge's
    # The proxy is gone once the grader has finished.
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{details['url']}/info", timeout=2)


def test_the_proxy_needs_a_grader_target(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    command = python_grader(tmp_path, "g.py", "print(1)")
    case = make_case([{"type": "code-grader", "command": command, "target": True}])
    result = only_grader(grade_trial(case, make_session()))
    assert result.verdict == "error"
    assert result.error is not None
    assert "uses the target proxy (target: true) but there is no grader target" in message_of(
        result.error
    )


def test_a_grader_without_target_gets_no_proxy(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    source = (
        "import json, os\n"
        "print(json.dumps({'score': 1, 'details': {'proxy': 'AGENTV_TARGET_PROXY_URL' in "
        "os.environ}}))\n"
    )
    command = python_grader(tmp_path, "g.py", source)
    result = only_grader(
        grade_trial(make_case([{"type": "code-grader", "command": command}]), make_session())
    )
    assert result.details == {"proxy": False}
    assert result.judge_usage is None


DOC = Path(__file__).resolve().parents[2] / "docs" / "grader-contract.md"


@pytest.mark.parametrize(("verdict", "score"), [("Yes.", 1.0), ("No, it is rude.", 0.0)])
def test_the_doc_example_runs_as_written(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    verdict: str,
    score: float,
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    example = only([b for b in blocks if b.startswith("# graders/ask_judge.py")])
    graders = tmp_path / "graders"
    graders.mkdir()
    (graders / "ask_judge.py").write_text(example)
    script = tmp_path / "judge.yaml"
    rule = {"when": {"contains": "refuse politely"}, "turns": [{"text": verdict}]}
    script.write_text(yaml.safe_dump({"rules": [rule], "turns": [{"text": "?"}]}))
    spec = {
        "name": "judge",
        "provider": "openai",
        "model": "m",
        "model_server": {"script": str(script)},
    }
    case = make_case(
        [
            {
                "type": "code-grader",
                "command": [sys.executable, "graders/ask_judge.py"],
                "target": True,
            }
        ],
        grader_target="judge",
        llm_targets={"judge": spec},
    )
    with LlmClients(case.llm_targets) as clients:
        result = only_grader(grade_trial(case, make_session(), llm=clients))
    assert (result.score, result.assertions[0].evidence) == (score, verdict), result.stderr
    assert (result.details or {})["target_proxy"] == {"call_count": 1, "max_calls": 50}


def only(items: list[str]) -> str:
    assert len(items) == 1, items
    return items[0]
