"""Whole multi-turn conversations driven like each CLI drives them, in sequence and in parallel."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from evals_pipeline.model_server import ModelServer, load_script
from evals_pipeline.model_server.actions import add_file_patch
from evals_pipeline.model_server.script import ModelScript, RunBash, WriteFile
from evals_pipeline_tests.model_server.conftest import (
    FIXTURE_SCRIPTS,
    StartServer,
    anthropic_client,
    openai_client,
    replies,
)
from evals_pipeline_tests.model_server.wire import (
    CLAUDE_SYSTEM,
    CLAUDE_TOOLS,
    CWD,
    codex_body,
    pi_body,
)

Call = tuple[str, Any]
Turn = tuple[list[Call], str]
MAX_TURNS = 10


def run_claude(server: ModelServer, session: str = "s", client: Any = None) -> list[Turn]:
    """claude's loop: stream a turn, echo it as one assistant message, answer its tool uses."""
    client = client or anthropic_client(server)
    prompt = "Go"
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    turns: list[Turn] = []
    while len(turns) < MAX_TURNS:
        try:
            with client.messages.stream(
                model="claude-test",
                max_tokens=32000,
                system=CLAUDE_SYSTEM,
                tools=CLAUDE_TOOLS,
                messages=messages,
                extra_headers={"x-claude-code-session-id": session},
            ) as stream:
                message = stream.get_final_message()
        except anthropic.APIStatusError as exc:
            turns.append(([("HTTP", exc.status_code)], ""))
            continue  # claude retries with the same history
        uses = [b for b in message.content if b.type == "tool_use"]
        text = "".join(b.text for b in message.content if b.type == "text")
        turns.append(([(b.name, b.input) for b in uses], text))
        if message.stop_reason != "tool_use":
            return turns
        messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in message.content],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": b.id, "content": "ok"} for b in uses
                ],
            }
        )
    raise AssertionError("the conversation did not end")


def run_codex(server: ModelServer, session: str = "s", client: Any = None) -> list[Turn]:
    """codex's loop: stream a response, echo every output item, then one output per call."""
    client = client or openai_client(server)
    prompt = "Go"
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": prompt}]
    turns: list[Turn] = []
    while len(turns) < MAX_TURNS:
        body = codex_body(items)
        events = list(client.responses.create(**body, extra_headers={"session-id": session}))
        output = [e.item for e in events if e.type == "response.output_item.done"]
        assert events[-1].type == "response.completed"
        calls: list[Call] = []
        text = ""
        for item in output:
            if item.type == "message":
                text += "".join(part.text for part in item.content if part.type == "output_text")
            elif item.type == "custom_tool_call":
                calls.append((item.name, item.input))
            elif item.type == "function_call":
                calls.append((item.name, json.loads(item.arguments)))
        turns.append((calls, text))
        if not calls:
            return turns
        items.extend(item.model_dump(exclude_none=True) for item in output)
        for item in output:
            if item.type == "custom_tool_call":
                items.append(
                    {"type": "custom_tool_call_output", "call_id": item.call_id, "output": "ok"}
                )
            elif item.type == "function_call":
                items.append(
                    {"type": "function_call_output", "call_id": item.call_id, "output": "ok"}
                )
    raise AssertionError("the conversation did not end")


def run_pi(server: ModelServer, session: str = "s", client: Any = None) -> list[Turn]:
    """pi's loop over Chat Completions: accumulate chunks, echo the message, answer each call.

    pi sends no session header, so the session goes into the prompt (the fallback session key).
    """
    client = client or openai_client(server)
    prompt = "Go"
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"{prompt} ({session})"}]
    turns: list[Turn] = []
    while len(turns) < MAX_TURNS:
        text = ""
        names: dict[int, str] = {}
        arguments: dict[int, str] = {}
        ids: dict[int, str] = {}
        for chunk in client.chat.completions.create(**pi_body(messages)):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    if call.id:
                        ids[call.index] = call.id
                    if call.function and call.function.name:
                        names[call.index] = call.function.name
                    if call.function and call.function.arguments:
                        arguments[call.index] = (
                            arguments.get(call.index, "") + call.function.arguments
                        )
        calls = [(names[i], json.loads(arguments[i])) for i in sorted(names)]
        turns.append((calls, text))
        if not calls:
            return turns
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": ids[i],
                        "type": "function",
                        "function": {"name": names[i], "arguments": arguments[i]},
                    }
                    for i in sorted(names)
                ],
            }
        )
        messages.extend(
            {"role": "tool", "tool_call_id": ids[i], "content": "ok"} for i in sorted(names)
        )
    raise AssertionError("the conversation did not end")


def claude_call(action: WriteFile | RunBash) -> Call:
    if isinstance(action, WriteFile):
        return ("Write", {"file_path": f"{CWD}/{action.path}", "content": action.content})
    return ("Bash", {"command": action.command, "description": action.description or "Run command"})


def codex_call(action: WriteFile | RunBash) -> Call:
    if isinstance(action, WriteFile):
        return ("apply_patch", add_file_patch(action.path, action.content))
    return ("exec_command", {"cmd": action.command})


def pi_call(action: WriteFile | RunBash) -> Call:
    if isinstance(action, WriteFile):
        return ("write", {"path": action.path, "content": action.content})
    return ("bash", {"command": action.command})


CLIS: dict[str, tuple[Callable[..., list[Turn]], Callable[[Any], Call]]] = {
    "claude": (run_claude, claude_call),
    "codex": (run_codex, codex_call),
    "pi": (run_pi, pi_call),
}


def expected(script: ModelScript, to_call: Callable[[Any], Call]) -> list[Turn]:
    return [([to_call(a) for a in turn.tool_calls], turn.text or "") for turn in script.turns]


@pytest.mark.parametrize("cli", sorted(CLIS))
@pytest.mark.parametrize("name", ["hello.json", "multi.json"])
def test_fixture_script_drives_each_cli(
    start: StartServer, log_path: Path, cli: str, name: str
) -> None:
    script = load_script(FIXTURE_SCRIPTS / name)
    run, to_call = CLIS[cli]
    server = start(script)

    assert run(server) == expected(script, to_call)
    logged = replies(log_path)
    assert [e["turn"] for e in logged] == list(range(len(script.turns)))
    assert not any(e["exhausted"] for e in logged)


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_parallel_runs_share_one_server(start: StartServer, log_path: Path, cli: str) -> None:
    """Sessions run at once; each fails turn 1 once (its own count) and then recovers."""
    script = ModelScript.model_validate(
        [
            {
                "text": "start",
                "tool_calls": [{"action": "write_file", "path": "x.py", "content": "x\n"}],
            },
            {
                "http_error": {"status": 529, "times": 1},
                "tool_calls": [{"action": "bash", "command": "ls"}],
            },
            {"text": "end"},
        ]
    )
    run, to_call = CLIS[cli]
    server = start(script)
    sessions = [f"session-{n}" for n in range(12)]
    client = anthropic_client(server) if cli == "claude" else openai_client(server)

    def runner(session: str) -> list[Turn]:
        try:
            return run(server, session, client)
        except openai.APIStatusError as exc:
            # These drivers do not retry inside a run: start the run again, as a CLI retry would.
            assert exc.status_code == 529
            return run(server, session, client)

    with ThreadPoolExecutor(max_workers=len(sessions)) as pool:
        results = list(pool.map(runner, sessions))

    want = expected(script, to_call)
    if cli == "claude":
        want = [want[0], ([("HTTP", 529)], ""), *want[1:]]
    assert all(result == want for result in results)
    logged = replies(log_path)
    errors = [e["session"] for e in logged if e["status"] == 529]
    assert len(errors) == len(sessions) and len(set(errors)) == len(sessions)
