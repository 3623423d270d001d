"""OpenAI Responses through the real `openai` SDK and raw HTTP (agent-clis.md 8.2, 8.6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals_pipeline.model_server.responses import count_model_turns
from evals_pipeline_tests.model_server.conftest import StartServer, openai_client
from evals_pipeline_tests.model_server.wire import (
    CODEX_PREAMBLE,
    CODEX_TOOLS,
    codex_body,
    post,
    sse_events,
)

SCRIPT = [
    {
        "text": "I'll create hello.py.",
        "tool_calls": [{"action": "write_file", "path": "hello.py", "content": "print('hi')\n"}],
    },
    {"tool_calls": [{"action": "bash", "command": "python3 hello.py"}]},
    {"text": "Done."},
]
PROMPT: dict[str, Any] = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "Go"}],
}
ENVELOPE = "*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** End Patch\n"


def assistant(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def patch_call(call_id: str) -> dict[str, Any]:
    return {
        "type": "custom_tool_call",
        "call_id": call_id,
        "name": "apply_patch",
        "input": ENVELOPE,
    }


def patch_output(call_id: str) -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": "Success."}


def exec_call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}"}


def exec_output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "Exit code: 0"}


@pytest.mark.parametrize(
    ("items", "turns"),
    [
        ([PROMPT], 0),
        # codex echoes one turn's text and call as two items: still one turn
        ([PROMPT, assistant("I'll"), patch_call("a"), patch_output("a")], 1),
        (
            [
                PROMPT,
                assistant("I'll"),
                patch_call("a"),
                patch_output("a"),
                exec_call("b"),
                exec_output("b"),
            ],
            2,
        ),
        # parallel calls: outputs come after all calls of the turn
        ([PROMPT, patch_call("a"), patch_call("b"), patch_output("a"), patch_output("b")], 1),
        ([PROMPT, {"type": "reasoning", "summary": []}, assistant("x"), exec_call("c")], 1),
        # a user message between two assistant messages splits them into two turns
        ([PROMPT, assistant("a"), PROMPT, assistant("b")], 2),
        ([PROMPT, {"role": "assistant", "content": "short form"}], 1),
        ([{"type": "local_shell_call", "call_id": "x"}, {"type": "local_shell_call_output"}], 1),
    ],
)
def test_turns_are_maximal_runs_of_model_items(items: list[dict[str, Any]], turns: int) -> None:
    assert count_model_turns(items) == turns


def test_codex_turns_through_the_sdk(start: StartServer) -> None:
    server = start(SCRIPT)
    client = openai_client(server)

    first = client.responses.create(**codex_body([PROMPT], stream=False))
    assert [item.type for item in first.output] == ["message", "custom_tool_call"]
    assert first.output_text == "I'll create hello.py."
    patch = first.output[1]
    assert patch.type == "custom_tool_call"
    assert (patch.name, patch.input) == ("apply_patch", ENVELOPE)
    assert patch.call_id.startswith("call_fake_0_0_")
    assert first.status == "completed"

    echoed = [PROMPT, assistant("I'll create hello.py."), patch_call("a"), patch_output("a")]
    second = client.responses.create(**codex_body(echoed, stream=False))
    assert [item.type for item in second.output] == ["function_call"]
    call = second.output[0]
    assert call.type == "function_call"
    assert (call.name, json.loads(call.arguments)) == ("exec_command", {"cmd": "python3 hello.py"})

    final = client.responses.create(
        **codex_body([*echoed, exec_call("b"), exec_output("b")], stream=False)
    )
    assert [item.type for item in final.output] == ["message"]
    assert final.output_text == "Done."


def test_streamed_events_in_order_with_sequence_numbers(start: StartServer) -> None:
    server = start(SCRIPT)
    status, headers, raw = post(server.port, "/v1/responses", codex_body([PROMPT]))

    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse_events(raw)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert all(name == data["type"] for name, data in events)
    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.custom_tool_call_input.delta"] * 3,
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    created = events[0][1]["response"]
    assert (created["status"], created["output"], created["usage"]) == ("in_progress", [], None)
    added = events[8][1]
    assert added["output_index"] == 1 and added["item"]["input"] == ""
    deltas = "".join(d["delta"] for n, d in events if n == "response.custom_tool_call_input.delta")
    assert deltas == ENVELOPE
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert [item["type"] for item in completed["output"]] == ["message", "custom_tool_call"]
    usage = completed["usage"]
    assert set(usage) == {
        "input_tokens",
        "input_tokens_details",
        "output_tokens",
        "output_tokens_details",
        "total_tokens",
    }
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert usage["output_tokens"] == (len("I'll create hello.py.") + len(ENVELOPE)) // 4


def test_sdk_stream_function_call_arguments(start: StartServer) -> None:
    server = start(SCRIPT)
    client = openai_client(server)
    echoed = [PROMPT, assistant("I'll"), patch_call("a"), patch_output("a")]
    events = list(client.responses.create(**codex_body(echoed)))

    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(deltas) == {"cmd": "python3 hello.py"}
    done = [e for e in events if e.type == "response.output_item.done"]
    assert done[0].item.type == "function_call"
    assert events[-1].type == "response.completed"


def test_local_shell_call_item(start: StartServer) -> None:
    server = start([{"tool_calls": [{"action": "bash", "command": "ls"}]}])
    body = {"model": "m", "input": "list files", "tools": [{"type": "local_shell"}], "stream": True}
    _, _, raw = post(server.port, "/responses", body)
    events = sse_events(raw)
    assert [n for n, _ in events][2:4] == [
        "response.output_item.added",
        "response.output_item.done",
    ]
    item = events[3][1]["item"]
    assert item["type"] == "local_shell_call"
    assert item["action"] == {
        "type": "exec",
        "command": ["bash", "-lc", "ls"],
        "env": {},
        "timeout_ms": None,
        "user": None,
        "working_directory": None,
    }


def test_write_without_apply_patch_is_a_heredoc_via_exec_command(start: StartServer) -> None:
    server = start(SCRIPT)
    tools = [t for t in CODEX_TOOLS if t.get("name") != "apply_patch"]
    body = {**codex_body([PROMPT], stream=False), "tools": tools}
    status, _, raw = post(server.port, "/v1/responses", body)
    assert status == 200
    call = json.loads(raw)["output"][1]
    assert call["type"] == "function_call" and call["name"] == "exec_command"
    assert json.loads(call["arguments"])["cmd"].startswith("cat > hello.py <<'EOF'\n")


def test_side_request_without_tools(start: StartServer) -> None:
    server = start(SCRIPT)
    client = openai_client(server)
    params: dict[str, Any] = {"input": [*CODEX_PREAMBLE, PROMPT]}
    response = client.responses.create(model="m", **params)
    assert response.output_text == "OK"
