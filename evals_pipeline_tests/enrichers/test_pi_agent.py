"""pi `--mode json` stdout and session files into the canonical event model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.enrichers.pi_agent import parse_pi, pi_usage
from evals_pipeline.models.messages import TokenUsage

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
HELLO = (TRANSCRIPTS / "pi.jsonl").read_text()
SESSION_FILE = (TRANSCRIPTS / "pi.session.jsonl").read_text()
MULTI = (TRANSCRIPTS / "pi.multi_parallel_and_failing_tool.jsonl").read_text()
SESSION_ID = "01a1fec2-e098-71a0-8cfa-bd347c5a882d"
ANSWER = "Done. I created hello.py and ran it; it prints: hello from the fake LLM"


def jsonl(*lines: dict[str, Any]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def assistant_messages(text: str) -> list[dict[str, Any]]:
    """The AssistantMessages as message_end reports them: the independent expectation."""
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [
        line["message"]
        for line in lines
        if line["type"] == "message_end" and line["message"]["role"] == "assistant"
    ]


def assistant(ts: int, content: list[dict[str, Any]], stop: str = "stop", **extra: Any) -> dict:
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.001}}
    message = {"role": "assistant", "content": content, "model": "m1", "usage": usage}
    return {
        "type": "message_end",
        "message": {**message, "stopReason": stop, "timestamp": ts, **extra},
    }


def test_stdout_facts() -> None:
    session = parse_pi(HELLO)
    calls = assistant_messages(HELLO)
    assert session.agent_kind == "pi-agent"
    assert session.session_id == SESSION_ID
    assert session.model == "fake-model"
    assert session.llm_call_count == len(calls) == 3
    assert session.token_usage == TokenUsage(
        input=sum(c["usage"]["input"] + c["usage"]["cacheWrite"] for c in calls),
        output=sum(c["usage"]["output"] for c in calls),
        cached=sum(c["usage"]["cacheRead"] for c in calls),
    )
    assert session.token_usage == TokenUsage(input=4551, output=106, cached=0)
    assert session.cost_usd == pytest.approx(sum(c["usage"]["cost"]["total"] for c in calls))
    assert session.cost_usd == pytest.approx(0.015243)
    assert session.duration_ms == 1795275547213 - 1795275546839
    assert session.final_answer == ANSWER
    assert session.error is None
    assert session.parse_warnings == []


def test_stdout_events_and_messages() -> None:
    session = parse_pi(HELLO)
    assert [(e.kind, e.role, e.tool, e.turn_index) for e in session.events] == [
        ("message", "user", None, 0),
        ("message", "assistant", None, 0),
        ("tool_call", "assistant", "Write", 0),
        ("tool_call", "assistant", "Bash", 1),
        ("message", "assistant", None, 2),
    ]
    write = session.events[2]
    assert (write.native_tool, write.tool_input["path"], write.status) == (
        "write",
        "hello.py",
        "ok",
    )
    assert write.tool_output == "Successfully wrote 33 bytes to hello.py"
    assert write.timestamp_ms == 1795275546911
    assert session.messages[1].tool_calls[0].end_time_ms == 1795275546952  # the toolResult's time
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant", "assistant"]
    assert session.messages[1].token_usage == TokenUsage(input=1432, output=51)


def test_session_file_matches_stdout() -> None:
    from_file = parse_pi(SESSION_FILE)
    from_stdout = parse_pi(HELLO)
    for field in ("session_id", "model", "token_usage", "cost_usd", "duration_ms", "final_answer"):
        assert getattr(from_file, field) == getattr(from_stdout, field), field
    assert from_file.llm_call_count == 3
    assert [(e.kind, e.tool, e.tool_output) for e in from_file.events] == [
        (e.kind, e.tool, e.tool_output) for e in from_stdout.events
    ]
    assert from_file.parse_warnings == []


def test_multi_parallel_writes_share_a_turn_and_failing_bash_is_an_error() -> None:
    session = parse_pi(MULTI)
    assert session.tool_sequence() == ["Write", "Write", "Bash", "Bash"]
    calls = [e for e in session.events if e.kind == "tool_call"]
    assert [c.turn_index for c in calls] == [0, 0, 1, 2]
    assert (calls[3].status, calls[3].exit_code) == ("error", 3)
    assert calls[3].tool_output == "(no output)\n\nCommand exited with code 3"
    assert session.llm_call_count == 4
    assert session.cost_usd == pytest.approx(
        sum(c["usage"]["cost"]["total"] for c in assistant_messages(MULTI))
    )


def test_model_error_with_exit_0_is_the_session_error() -> None:
    text = jsonl(
        {"type": "session", "version": 3, "id": "p1", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "message_end", "message": {"role": "user", "content": "hi", "timestamp": 1000}},
        assistant(2000, [], stop="error", errorMessage="400 bad request"),
        {"type": "agent_end", "messages": []},
    )
    session = parse_pi(text)
    assert session.error == "400 bad request"
    assert [(e.kind, e.text, e.detail) for e in session.events] == [
        ("message", "hi", None),
        ("error", "400 bad request", {"stop_reason": "error"}),
    ]
    assert session.llm_call_count == 0
    assert session.final_answer == ""


def test_auto_retry_then_success_clears_the_error() -> None:
    text = jsonl(
        assistant(1000, [], stop="error", errorMessage="529 overloaded"),
        {
            "type": "auto_retry_start",
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 2000,
            "errorMessage": "529 overloaded",
        },
        assistant(4000, [{"type": "text", "text": "Done."}]),
        {"type": "auto_retry_end", "success": True, "attempt": 1},
    )
    session = parse_pi(text)
    assert session.error is None
    assert session.retries == 1  # auto_retry_end is an event, not another attempt
    assert [e.kind for e in session.events] == ["error", "retry", "message", "retry"]
    assert session.events[1].detail == {"attempt": 1, "maxAttempts": 3, "delayMs": 2000}
    # The failed call and its retry share the turn index of the call that answered.
    assert [e.turn_index for e in session.events[:3]] == [0, 0, 0]
    assert session.llm_call_count == 1
    assert session.final_answer == "Done."


def test_aborted_last_message_is_an_error_too() -> None:
    session = parse_pi(jsonl(assistant(1, [{"type": "text", "text": "part"}], stop="aborted")))
    assert session.error == "stopReason: aborted"
    assert session.llm_call_count == 1


def test_repeated_messages_count_once() -> None:
    done = assistant(1000, [{"type": "text", "text": "Done."}])
    session = parse_pi(jsonl(done, done, {"type": "turn_end", "message": done["message"]}))
    assert session.llm_call_count == 1
    assert session.token_usage == TokenUsage(input=10, output=5)


def test_session_file_reads_the_active_branch_only() -> None:
    def entry(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": message,
        }

    text = jsonl(
        {"type": "session", "version": 3, "id": "p2", "timestamp": "2026-01-01T00:00:00Z"},
        {
            "type": "model_change",
            "id": "m",
            "parentId": None,
            "provider": "x",
            "modelId": "from-change",
        },
        entry("u1", "m", {"role": "user", "content": "first try", "timestamp": 1}),
        entry(
            "a1",
            "u1",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "abandoned"}],
                "stopReason": "stop",
                "timestamp": 2,
            },
        ),
        entry("u2", "m", {"role": "user", "content": "second try", "timestamp": 3}),
        entry(
            "a2",
            "u2",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "kept"}],
                "stopReason": "stop",
                "timestamp": 4,
            },
        ),
    )
    session = parse_pi(text)
    assert session.session_id == "p2"
    assert session.model == "from-change"
    assert [e.text for e in session.events] == ["second try", "kept"]
    assert session.final_answer == "kept"


def test_broken_session_tree_falls_back_to_file_order() -> None:
    text = jsonl(
        {
            "type": "message",
            "id": "a",
            "parentId": "missing",
            "message": {"role": "user", "content": "x", "timestamp": 1},
        },
    )
    session = parse_pi(text)
    assert [e.text for e in session.events] == ["x"]
    assert session.parse_warnings == [
        "session tree is broken or cyclic: entries read in file order"
    ]


def test_custom_messages_are_injections() -> None:
    text = jsonl(
        {
            "type": "message_end",
            "message": {
                "role": "custom",
                "customType": "my-ext",
                "content": "Context!",
                "display": True,
                "timestamp": 5,
            },
        }
    )
    session = parse_pi(text)
    assert [(i.source, i.label, i.content) for i in session.system_prompt_injections] == [
        ("pi:custom", "my-ext", "Context!")
    ]


def test_pi_usage_convention() -> None:
    usage = {"input": 10, "output": 3, "cacheRead": 100, "cacheWrite": 7}
    assert pi_usage(usage) == TokenUsage(input=17, output=3, cached=100)
