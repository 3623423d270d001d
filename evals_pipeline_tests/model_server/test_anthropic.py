"""Anthropic Messages through the real `anthropic` SDK and raw HTTP (agent-clis.md 8.5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals_pipeline_tests.model_server.conftest import (
    StartServer,
    anthropic_client,
    replies,
)
from evals_pipeline_tests.model_server.wire import (
    CLAUDE_SYSTEM,
    CLAUDE_TOOLS,
    CWD,
    claude_body,
    post,
    sse_events,
)

SCRIPT = [
    {
        "text": "I'll create hello.py.",
        "tool_calls": [{"action": "write_file", "path": "hello.py", "content": "print('hi')\n"}],
    },
    {"tool_calls": [{"action": "bash", "command": "python3 hello.py"}]},
    {"text": "Done: it prints hi."},
]
PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "Create hello.py and run it."}]


def history(turns: int) -> list[dict[str, Any]]:
    """A claude history with `turns` assistant turns, each followed by its tool results."""
    messages: list[dict[str, Any]] = list(PROMPT)
    for n in range(turns):
        tool_id = f"toolu_{n}"
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}],
            }
        )
    return messages


def create(server: Any, messages: list[dict[str, Any]], **extra: Any) -> Any:
    client = anthropic_client(server)
    params: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": CLAUDE_SYSTEM,
        "tools": CLAUDE_TOOLS,
        "messages": messages,
        **extra,
    }
    return client.messages.with_raw_response.create(**params)


def test_first_turn_resolves_to_claude_tools(start: StartServer) -> None:
    server = start(SCRIPT)
    raw = create(server, PROMPT)
    message = raw.parse()

    assert raw.headers["request-id"].startswith("req_")
    assert message.model == "claude-test"
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "I'll create hello.py."
    tool = message.content[1]
    assert tool.name == "Write"
    assert tool.input == {"file_path": f"{CWD}/hello.py", "content": "print('hi')\n"}
    assert tool.id.startswith("toolu_fake_0_0_")


def test_turn_index_is_the_number_of_assistant_messages(start: StartServer) -> None:
    server = start(SCRIPT)

    second = create(server, history(1)).parse()
    assert [(b.name, b.input) for b in second.content if b.type == "tool_use"] == [
        ("Bash", {"command": "python3 hello.py", "description": "Run command"})
    ]
    assert second.content[0].id.startswith("toolu_fake_1_0_")

    last = create(server, history(2)).parse()
    assert last.stop_reason == "end_turn"
    assert [b.text for b in last.content if b.type == "text"] == ["Done: it prints hi."]


def test_streaming_matches_the_event_sequence(start: StartServer) -> None:
    server = start(SCRIPT)
    status, headers, raw = post(server.port, "/v1/messages?beta=true", claude_body(PROMPT))

    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    assert headers["request-id"].startswith("req_")
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(name == data["type"] for name, data in events)
    start_message = events[0][1]["message"]
    assert start_message["content"] == [] and start_message["stop_reason"] is None
    assert start_message["usage"]["output_tokens"] == 1
    # Blocks are indexed from 0; each is start, deltas, stop.
    body = events[2:-2]
    assert [e[1]["index"] for e in body if e[0] == "content_block_start"] == [0, 1]
    assert [e[1]["index"] for e in body if e[0] == "content_block_stop"] == [0, 1]
    text = "".join(
        d["delta"]["text"] for n, d in body if n == "content_block_delta" and d["index"] == 0
    )
    partial = "".join(
        d["delta"]["partial_json"]
        for n, d in body
        if n == "content_block_delta" and d["index"] == 1
    )
    assert text == "I'll create hello.py."
    assert json.loads(partial) == {"file_path": f"{CWD}/hello.py", "content": "print('hi')\n"}
    tool_start = next(d for n, d in body if n == "content_block_start" and d["index"] == 1)
    assert tool_start["content_block"]["input"] == {}
    assert tool_start["content_block"]["name"] == "Write"
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_sdk_stream_accumulates_to_the_same_message(start: StartServer) -> None:
    server = start(SCRIPT)
    client = anthropic_client(server)
    params: dict[str, Any] = {
        "system": CLAUDE_SYSTEM,
        "tools": CLAUDE_TOOLS,
        "messages": history(1),
    }
    with client.messages.stream(model="m", max_tokens=10, **params) as stream:
        streamed = [event.type for event in stream]
        final = stream.get_final_message()
    assert "input_json" in streamed
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "tool_use"
    assert final.content[0].input == {"command": "python3 hello.py", "description": "Run command"}
    non_streamed = create(server, history(1)).parse()
    assert final.usage.output_tokens == non_streamed.usage.output_tokens


def test_usage_is_characters_over_four(start: StartServer) -> None:
    server = start(SCRIPT)
    message = create(server, PROMPT).parse()

    def chars(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))

    assert message.usage.input_tokens == (chars(CLAUDE_SYSTEM) + chars(PROMPT)) // 4
    arguments = {"file_path": f"{CWD}/hello.py", "content": "print('hi')\n"}
    expected_output = (len("I'll create hello.py.") + len(json.dumps(arguments))) // 4
    assert message.usage.output_tokens == expected_output


def test_scripted_usage_wins(start: StartServer) -> None:
    server = start([{"text": "x", "usage": {"input_tokens": 1234, "output_tokens": 56}}])
    message = create(server, PROMPT).parse()
    assert (message.usage.input_tokens, message.usage.output_tokens) == (1234, 56)
    _, _, raw = post(server.port, "/v1/messages", claude_body(PROMPT))
    events = sse_events(raw)
    assert events[0][1]["message"]["usage"]["input_tokens"] == 1234
    assert events[-2][1]["usage"] == {"output_tokens": 56}


def test_side_request_does_not_consume_a_turn(start: StartServer, log_path: Path) -> None:
    server = start(SCRIPT)
    client = anthropic_client(server)
    title = client.messages.create(model="claude-haiku", max_tokens=50, messages=PROMPT)  # type: ignore[arg-type]
    assert [b.text for b in title.content if b.type == "text"] == ["OK"]
    assert title.stop_reason == "end_turn"

    first = create(server, PROMPT).parse()
    assert first.content[0].text == "I'll create hello.py."
    logged = replies(log_path)
    assert [(e["side_request"], e["turn"]) for e in logged] == [(True, None), (False, 0)]


def test_history_longer_than_the_script_repeats_the_last_text_turn(
    start: StartServer, log_path: Path
) -> None:
    server = start(SCRIPT)
    message = create(server, history(5)).parse()
    assert message.stop_reason == "end_turn"
    assert [b.text for b in message.content if b.type == "text"] == ["Done: it prints hi."]
    last = replies(log_path)[-1]
    assert (last["turn"], last["script_turn"], last["exhausted"]) == (5, 2, True)


def test_exhausted_script_without_text_turn_says_done(start: StartServer) -> None:
    server = start([{"tool_calls": [{"action": "bash", "command": "true"}]}])
    message = create(server, history(1)).parse()
    assert [b.text for b in message.content if b.type == "text"] == ["Done."]


def test_count_tokens(start: StartServer) -> None:
    server = start(SCRIPT)
    client = anthropic_client(server)
    counted = client.messages.count_tokens(model="m", system="s" * 40, messages=PROMPT)  # type: ignore[arg-type]
    chars = 40 + len(json.dumps(PROMPT, separators=(",", ":")))
    assert counted.input_tokens == chars // 4
    status, _, raw = post(server.port, "/messages/count_tokens", {"messages": "nope"})
    assert status == 400
    assert json.loads(raw)["error"]["type"] == "invalid_request_error"
