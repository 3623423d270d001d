"""Claude Code stream-json and on-disk transcripts into the canonical event model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals_pipeline.enrichers.claude_code import claude_usage, parse_claude
from evals_pipeline.enrichers.cli_output import iso_to_ms
from evals_pipeline.models.messages import TokenUsage

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
HELLO = (TRANSCRIPTS / "claude.jsonl").read_text()
MULTI = (TRANSCRIPTS / "claude.multi_parallel_and_failing_tool.jsonl").read_text()


def jsonl(*lines: dict[str, object]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def assistant(msg_id: str, block: dict[str, object], **extra: object) -> dict[str, object]:
    message = {"id": msg_id, "model": "claude-sonnet-4-5", "content": [block]}
    return {"type": "assistant", "message": message, "session_id": "s1", **extra}


def tool_result(call_id: str, content: str, **block: object) -> dict[str, object]:
    result = {"type": "tool_result", "tool_use_id": call_id, "content": content, **block}
    return {"type": "user", "message": {"role": "user", "content": [result]}, "session_id": "s1"}


# --- the real hello run -------------------------------------------------------------------


def test_hello_run_facts() -> None:
    session = parse_claude(HELLO)
    assert session.agent_kind == "claude-code"
    assert session.session_id == "8f15f8a7-a5e3-429d-9695-2544ae604b29"
    assert session.model == "claude-sonnet-4-5"
    assert session.token_usage == TokenUsage(input=88413, output=119, cached=0)
    assert session.cost_usd == pytest.approx(0.267024)
    assert session.duration_ms == 579
    assert session.llm_call_count == 3
    assert (
        session.final_answer
        == "Done. I created hello.py and ran it; it prints: hello from the fake LLM"
    )
    assert session.error is None
    assert session.parse_warnings == []


def test_hello_events_in_order_with_turns_and_paired_results() -> None:
    session = parse_claude(HELLO)
    assert [(e.seq, e.kind, e.turn_index) for e in session.events] == [
        (0, "message", 0),
        (1, "tool_call", 0),
        (2, "tool_call", 1),
        (3, "message", 2),
    ]
    write, bash = session.events[1], session.events[2]
    assert (write.tool, write.native_tool, write.status) == ("Write", "Write", "ok")
    assert write.tool_input["file_path"] == "/workspace/case/hello.py"
    assert write.tool_output is not None and write.tool_output.startswith("File created")
    assert (bash.tool, bash.tool_input["command"], bash.tool_output) == (
        "Bash",
        "python3 hello.py",
        "hello from the fake LLM",
    )


def test_timestamps_are_carried_forward_from_user_lines() -> None:
    session = parse_claude(HELLO)
    first_result = iso_to_ms("2026-11-21T15:39:02.939Z")
    second_result = iso_to_ms("2026-11-21T15:39:03.218Z")
    # Only results carry a time: the first call is stamped by its result, the opening text has
    # none, and later lines inherit the last known time.
    assert [e.timestamp_ms for e in session.events] == [
        None,
        first_result,
        first_result,
        second_result,
    ]
    assert (session.start_ms, session.end_ms) == (first_result, second_result)
    write_call = session.messages[0].tool_calls[0]
    assert write_call.end_time_ms == first_result


def test_messages_one_assistant_message_per_model_call() -> None:
    session = parse_claude(HELLO)
    assert [(m.role, m.text(), [c.tool for c in m.tool_calls]) for m in session.messages] == [
        ("assistant", "I'll create hello.py.", ["Write"]),
        ("assistant", "", ["Bash"]),
        ("assistant", session.final_answer, []),
    ]
    assert session.messages[1].tool_calls[0].id == "toolu_fake_1_0_6c47779e"


# --- the real multi run: parallel writes, a test run, a failing command -------------------


def test_multi_run_parallel_calls_share_a_turn_and_failure_is_an_error() -> None:
    session = parse_claude(MULTI)
    assert session.tool_sequence() == ["Write", "Write", "Bash", "Bash"]
    assert session.llm_call_count == 4
    calls = [e for e in session.events if e.kind == "tool_call"]
    assert [c.turn_index for c in calls] == [0, 0, 1, 2]
    failing = calls[3]
    assert failing.tool_input["command"] == "exit 3"
    assert (failing.status, failing.exit_code, failing.tool_output) == ("error", 3, "Exit code 3")
    assert [c.status for c in calls[:3]] == ["ok", "ok", "ok"]  # is_error missing means ok
    assert session.token_usage == TokenUsage(input=118401, output=227, cached=0)
    assert session.cost_usd == pytest.approx(0.358608)
    assert session.final_answer.startswith("All done: greet.py and test_greet.py exist")


def test_multi_run_milestones() -> None:
    session = parse_claude(MULTI)
    milestones = {m.name: m for m in session.milestones}
    assert set(milestones) == {
        "first_file_edit",
        "first_test_run",
        "first_test_pass",
        "last_edit",
        "final_answer",
    }
    assert milestones["first_file_edit"].seq == 1
    assert milestones["last_edit"].seq == 2
    assert milestones["first_test_run"].seq == milestones["first_test_pass"].seq == 3
    assert milestones["final_answer"].seq == 5
    # From the first timestamp the stream gives (the first tool result) to the answer.
    assert milestones["final_answer"].elapsed_ms == 473 - 138


# --- errors and retries (agent-clis.md 4.6) -----------------------------------------------


def test_api_error_400_synthetic_line_and_result_is_error() -> None:
    text = jsonl(
        {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-sonnet-4-5"},
        assistant("msg_1", {"type": "text", "text": "Working on it."}),
        {
            "type": "assistant",
            "message": {
                "id": "0b1c-uuid",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "API Error: 400 bad request"}],
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
            "session_id": "s1",
            "error": "unknown",
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": 400,
            "result": "API Error: 400 bad request",
            "total_cost_usd": 0.01,
            "usage": {"input_tokens": 10, "output_tokens": 2},
            "session_id": "s1",
        },
    )
    session = parse_claude(text)
    assert session.error == "API Error: 400 bad request"
    errors = [e for e in session.events if e.kind == "error"]
    assert len(errors) == 1  # the synthetic line; the result line does not repeat it
    assert errors[0].text == "API Error: 400 bad request"
    assert errors[0].detail == {"error": "unknown", "api_error_status": None}
    assert session.llm_call_count == 1  # the synthetic message is not a model call
    assert session.final_answer == "Working on it."  # not the error text
    assert [m.text() for m in session.messages] == ["Working on it."]


def test_result_error_without_synthetic_line_is_an_error_event() -> None:
    text = jsonl(
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "session_id": "s1"}
    )
    session = parse_claude(text)
    assert session.error == "error_max_turns"
    assert [(e.kind, e.detail) for e in session.events] == [
        ("error", {"subtype": "error_max_turns", "api_error_status": None})
    ]


def test_api_retry_lines_are_retry_events() -> None:
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 2,
        "retry_delay_ms": 500,
        "error_status": 529,
        "error": "overloaded",
        "session_id": "s1",
    }
    text = jsonl(retry, {**retry, "attempt": 2})
    session = parse_claude(text)
    assert session.retries == 2
    assert [(e.kind, e.text, (e.detail or {}).get("attempt")) for e in session.events] == [
        ("retry", "overloaded", 1),
        ("retry", "overloaded", 2),
    ]


# --- the on-disk transcript ----------------------------------------------------------------


def transcript_line(kind: str, ts: str, message: dict[str, object], **extra: object) -> dict:
    return {
        "parentUuid": None,
        "sessionId": "disk-1",
        "type": kind,
        "message": message,
        "uuid": f"u-{ts}",
        "timestamp": f"2026-01-01T00:00:{ts}.000Z",
        **extra,
    }


ON_DISK = jsonl(
    transcript_line(
        "user",
        "00",
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "<system-reminder>\nclaudeMd: be brief\n</system-reminder>",
                },
                {"type": "text", "text": "Fix the bug."},
            ],
        },
    ),
    transcript_line(
        "assistant",
        "01",
        {
            "id": "msg_a",
            "model": "claude-opus-4-1",
            "content": [{"type": "text", "text": "Looking."}],
            "usage": {"input_tokens": 100, "output_tokens": 1, "cache_read_input_tokens": 50},
        },
    ),
    transcript_line(
        "assistant",
        "02",
        {
            "id": "msg_a",
            "model": "claude-opus-4-1",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
            ],
            # The last line of a message id has its final usage.
            "usage": {
                "input_tokens": 100,
                "output_tokens": 30,
                "cache_read_input_tokens": 50,
                "cache_creation_input_tokens": 5,
            },
        },
    ),
    transcript_line(
        "user",
        "04",
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"}],
        },
    ),
    transcript_line(
        "assistant",
        "05",
        {
            "id": "msg_b",
            "model": "claude-opus-4-1",
            "content": [{"type": "text", "text": "Fixed."}],
            "usage": {"input_tokens": 200, "output_tokens": 7},
        },
    ),
    {"type": "summary", "summary": "bug fix", "leafUuid": "u-05"},
)


def test_on_disk_transcript_sums_usage_per_message_id() -> None:
    session = parse_claude(ON_DISK)
    assert session.session_id == "disk-1"
    assert session.model == "claude-opus-4-1"
    assert session.llm_call_count == 2
    assert session.token_usage == TokenUsage(input=305, output=37, cached=50)
    assert session.messages[1].token_usage == TokenUsage(input=105, output=30, cached=50)
    assert session.cost_usd is None
    assert session.duration_ms == 5000
    assert session.final_answer == "Fixed."


def test_on_disk_transcript_times_reminders_and_user_prompt() -> None:
    session = parse_claude(ON_DISK)
    t0 = iso_to_ms("2026-01-01T00:00:00.000Z")
    assert t0 is not None
    assert [(e.kind, e.timestamp_ms) for e in session.events] == [
        ("system_prompt", t0),
        ("message", t0),
        ("message", t0 + 1000),
        ("tool_call", t0 + 2000),
        ("message", t0 + 5000),
    ]
    read = session.events[3]
    assert (read.tool, read.duration_ms, read.tool_output) == ("Read", 2000, "x = 1")
    [injection] = session.system_prompt_injections
    assert (injection.source, injection.label, injection.content) == (
        "claude:system-reminder",
        "claudeMd: be brief",
        "claudeMd: be brief",
    )
    assert session.messages[0].role == "user" and session.messages[0].text() == "Fix the bug."
    assert {m.name for m in session.milestones} == {"first_file_read", "final_answer"}


def test_sub_agent_lines_are_left_to_the_task_call() -> None:
    text = jsonl(
        assistant("m1", {"type": "tool_use", "id": "task1", "name": "Task", "input": {}}),
        assistant(
            "sub1",
            {"type": "tool_use", "id": "inner", "name": "Bash", "input": {"command": "ls"}},
            parent_tool_use_id="task1",
        ),
        tool_result("task1", "sub-agent report"),
    )
    session = parse_claude(text)
    assert session.tool_sequence() == ["Task"]
    assert session.llm_call_count == 1


def test_claude_usage_convention() -> None:
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 100,
        "output_tokens": 7,
    }
    assert claude_usage(usage) == TokenUsage(input=15, output=7, cached=100)
    assert claude_usage("nonsense") is None
