"""Chat Completions through the real `openai` SDK and raw HTTP (agent-clis.md 8.7)."""

from __future__ import annotations

import json
from typing import Any

from evals_pipeline_tests.model_server.conftest import StartServer, openai_client
from evals_pipeline_tests.model_server.wire import pi_body, post, sse_events

SCRIPT = [
    {
        "text": "Writing two files.",
        "tool_calls": [
            {"action": "write_file", "path": "a.py", "content": "A = 1\n"},
            {"action": "write_file", "path": "b.py", "content": "B = 2\n"},
        ],
    },
    {"tool_calls": [{"action": "bash", "command": "python3 a.py"}]},
    {"text": "All done."},
]
PROMPT: dict[str, Any] = {"role": "user", "content": "Write a.py and b.py"}


def after_first_turn() -> list[dict[str, Any]]:
    """pi's history after turn 0: a tool-only assistant message has `content: null`."""
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "write", "arguments": "{}"}}
        for n in range(2)
    ]
    return [
        PROMPT,
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c0", "content": "ok"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]


def test_non_streaming_parallel_calls_with_pi_tools(start: StartServer) -> None:
    server = start(SCRIPT)
    completion = openai_client(server).chat.completions.create(**pi_body([PROMPT], stream=False))

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Writing two files."
    calls = choice.message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("write", {"path": "a.py", "content": "A = 1\n"}),
        ("write", {"path": "b.py", "content": "B = 2\n"}),
    ]
    assert [c.id[: len("call_fake_0_0_")] for c in calls] == ["call_fake_0_0_", "call_fake_0_1_"]
    assert completion.usage is not None
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )


def test_streaming_chunks_reassemble(start: StartServer) -> None:
    server = start(SCRIPT)
    stream = openai_client(server).chat.completions.create(**pi_body(after_first_turn()))

    content, finish, usage = "", None, None
    arguments: dict[int, str] = {}
    names: dict[int, str] = {}
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                if call.function and call.function.name:
                    names[call.index] = call.function.name
                arguments[call.index] = arguments.get(call.index, "") + (
                    (call.function.arguments if call.function else "") or ""
                )
            finish = choice.finish_reason or finish
    assert content == ""
    assert names == {0: "bash"}
    assert json.loads(arguments[0]) == {"command": "python3 a.py"}
    assert finish == "tool_calls"
    assert usage is not None and usage.completion_tokens == len('{"command": "python3 a.py"}') // 4


def test_raw_chunk_sequence_and_done(start: StartServer) -> None:
    server = start(SCRIPT)
    _, headers, raw = post(server.port, "/v1/chat/completions", pi_body([PROMPT]))
    assert headers["content-type"] == "text/event-stream"
    events = sse_events(raw)
    assert all(name is None for name, _ in events)  # Chat Completions has no `event:` lines
    assert events[-1][1] == "[DONE]"
    chunks = [data for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    opening = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks
        if c["choices"] and "id" in c["choices"][0]["delta"].get("tool_calls", [{}])[0]
    ]
    assert [(o["index"], o["function"]) for o in opening] == [
        (0, {"name": "write", "arguments": ""}),
        (1, {"name": "write", "arguments": ""}),
    ]
    assert chunks[-2]["choices"][0] == {
        "index": 0,
        "delta": {},
        "finish_reason": "tool_calls",
        "logprobs": None,
    }
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] > 0


def test_no_usage_chunk_unless_asked(start: StartServer) -> None:
    server = start(SCRIPT)
    body = {**pi_body([PROMPT]), "stream_options": None}
    _, _, raw = post(server.port, "/chat/completions", body)
    chunks = [data for _, data in sse_events(raw)[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_turn_selection_counts_assistant_messages(start: StartServer) -> None:
    server = start(SCRIPT)
    client = openai_client(server)
    second = client.chat.completions.create(**pi_body(after_first_turn(), stream=False))
    assert second.choices[0].message.tool_calls[0].function.name == "bash"
    history = [
        *after_first_turn(),
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "x", "content": "A"},
    ]
    last = client.chat.completions.create(**pi_body(history, stream=False))
    assert last.choices[0].finish_reason == "stop"
    assert last.choices[0].message.content == "All done."
    assert last.choices[0].message.tool_calls is None
