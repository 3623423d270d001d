"""Codex `exec --json` stdout and rollout files into the canonical event model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals_pipeline.enrichers.codex import (
    codex_usage,
    parse_codex,
    parse_codex_rollout,
    unwrap_shell,
)
from evals_pipeline.models.messages import TokenUsage

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
HELLO = (TRANSCRIPTS / "codex.jsonl").read_text()
ROLLOUT = (TRANSCRIPTS / "codex.rollout.jsonl").read_text()
MULTI = (TRANSCRIPTS / "codex.multi_parallel_and_failing_tool.jsonl").read_text()
SESSION_ID = "01a1fec2-d675-7340-bbc1-1a46232f4197"
PATCH = (
    "*** Begin Patch\n*** Add File: hello.py\n+print('hello from the fake LLM')\n*** End Patch\n"
)
ANSWER = "Done. I created hello.py and ran it; it prints: hello from the fake LLM"


def jsonl(*lines: dict[str, object]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def rollout_line(kind: str, payload: dict[str, object], ts: str = "00") -> dict[str, object]:
    return {"timestamp": f"2026-01-01T00:00:{ts}.000Z", "type": kind, "payload": payload}


# --- stdout alone ---------------------------------------------------------------------------


def test_stdout_alone_facts() -> None:
    session = parse_codex(HELLO)
    assert session.agent_kind == "codex"
    assert session.session_id == SESSION_ID
    assert session.model is None  # not in stdout
    assert session.token_usage == TokenUsage(input=30028, output=226, cached=0)
    assert session.cost_usd is None
    assert session.duration_ms is None
    assert session.llm_call_count == 3
    assert session.final_answer == ANSWER
    assert session.parse_warnings == []


def test_stdout_alone_tool_calls() -> None:
    session = parse_codex(HELLO)
    assert session.tool_sequence() == ["Write", "Bash"]
    patch, command = (e for e in session.events if e.kind == "tool_call")
    assert (patch.native_tool, patch.tool_call_id, patch.status) == ("file_change", "item_1", "ok")
    assert patch.tool_input == {"changes": [{"path": "/workspace/case/hello.py", "kind": "add"}]}
    assert command.native_tool == "command_execution"
    assert command.tool_input == {"command": "python3 hello.py"}  # the bash -lc wrapper is gone
    assert (command.exit_code, command.status) == (0, "ok")
    assert command.tool_output is not None and command.tool_output.endswith(
        "hello from the fake LLM\n"
    )
    assert [e.turn_index for e in session.events] == [0, 0, 1, 2]
    assert all(e.timestamp_ms is None for e in session.events)


def test_multi_stdout_failing_command_and_test_milestones() -> None:
    session = parse_codex(MULTI)
    assert session.tool_sequence() == ["Write", "Write", "Bash", "Bash"]
    calls = [e for e in session.events if e.kind == "tool_call"]
    assert calls[2].tool_input == {"command": "python3 test_greet.py && ls"}
    assert (calls[3].tool_input, calls[3].status, calls[3].exit_code) == (
        {"command": "exit 3"},
        "error",
        3,
    )
    milestones = {m.name: m.seq for m in session.milestones}
    assert milestones["first_file_edit"] < milestones["first_test_run"]
    assert milestones["first_test_run"] == milestones["first_test_pass"] == calls[2].seq
    assert milestones["last_edit"] == calls[1].seq
    assert session.token_usage == TokenUsage(input=40678, output=370, cached=0)


# --- stdout with its rollout ---------------------------------------------------------------


def test_rollout_adds_model_duration_and_call_count() -> None:
    session = parse_codex(HELLO, rollout=ROLLOUT)
    assert session.session_id == SESSION_ID
    assert session.model == "gpt-5.5"
    assert session.duration_ms == 735
    assert session.llm_call_count == 3
    assert session.token_usage == TokenUsage(input=30028, output=226, cached=0)
    assert session.final_answer == ANSWER
    assert session.parse_warnings == []


def test_rollout_adds_exact_calls_and_timings() -> None:
    session = parse_codex(HELLO, rollout=ROLLOUT)
    assert session.tool_sequence() == ["Write", "Bash"]
    patch, command = (e for e in session.events if e.kind == "tool_call")
    assert (patch.native_tool, patch.tool_call_id) == ("apply_patch", "call_fake_0_0_1a3d33b7")
    assert patch.tool_input == {
        "changes": [{"path": "/workspace/case/hello.py", "kind": "add"}],
        "patch": PATCH,
    }
    assert patch.tool_output == "Success. Updated the following files:\nA hello.py\n"
    assert (patch.timestamp_ms, patch.duration_ms) == (1795275544314, 59)
    assert (command.native_tool, command.tool_input) == (
        "exec_command",
        {"command": "python3 hello.py"},
    )
    assert (command.timestamp_ms, command.duration_ms, command.turn_index) == (
        1795275544597,
        320,
        1,
    )
    [bash_call] = session.messages[2].tool_calls
    assert (bash_call.start_time_ms, bash_call.end_time_ms) == (1795275544597, 1795275544917)
    assert session.start_ms == 1795275544240  # the rollout's first line
    assert session.end_ms == 1795275544964


def test_rollout_injections_and_user_prompt_precede_the_first_item() -> None:
    session = parse_codex(HELLO, rollout=ROLLOUT)
    kinds = [(e.kind, e.label or e.role) for e in session.events[:7]]
    assert kinds == [
        ("system_prompt", "base_instructions"),
        ("system_prompt", "skills_instructions"),
        ("system_prompt", "permissions instructions"),
        ("system_prompt", "tools"),
        ("system_prompt", "environment_context"),
        ("message", "user"),
        ("message", "assistant"),
    ]
    sources = {i.label: i.source for i in session.system_prompt_injections}
    assert sources == {
        "base_instructions": "codex:session_meta",
        "skills_instructions": "codex:developer",
        "permissions instructions": "codex:developer",
        "tools": "codex:developer",
        "environment_context": "codex:user",
    }
    env = session.system_prompt_injections[-1].content
    assert "<cwd>/workspace/case</cwd>" in env
    assert session.messages[0].role == "user"
    assert session.messages[0].text() == "Create hello.py that prints a greeting, then run it."


def test_rollout_per_call_usage_on_assistant_messages() -> None:
    session = parse_codex(HELLO, rollout=ROLLOUT)
    usages = [m.token_usage for m in session.messages if m.role == "assistant"]
    assert usages == [
        TokenUsage(input=9850, output=114),
        TokenUsage(input=10023, output=50),
        TokenUsage(input=10155, output=62),
    ]


# --- the rollout alone ----------------------------------------------------------------------


def test_rollout_alone_matches_stdout_with_rollout() -> None:
    alone = parse_codex_rollout(ROLLOUT)
    both = parse_codex(HELLO, rollout=ROLLOUT)
    assert alone.session_id == SESSION_ID
    assert alone.model == "gpt-5.5"
    assert alone.token_usage == TokenUsage(input=30028, output=226, cached=0)
    assert alone.tool_sequence() == both.tool_sequence() == ["Write", "Bash"]
    assert [(e.kind, e.turn_index, e.timestamp_ms) for e in alone.events] == [
        (e.kind, e.turn_index, e.timestamp_ms) for e in both.events
    ]
    assert alone.final_answer == ANSWER
    assert alone.milestones == both.milestones


def test_parse_codex_recognises_a_rollout_passed_as_the_stream() -> None:
    session = parse_codex(ROLLOUT)
    assert session.model == "gpt-5.5"
    assert session.duration_ms == 735
    assert len(session.system_prompt_injections) == 5


AGENTS_MD = "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nUse uv.\n</INSTRUCTIONS>"


def test_rollout_agents_md_and_harness_messages_are_injections() -> None:
    text = jsonl(
        rollout_line("session_meta", {"id": "r1"}),
        rollout_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": AGENTS_MD,
                    }
                ],
            },
        ),
        rollout_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Turn aborted note"}],
                "internal_chat_message_metadata_passthrough": {
                    "content_item_metadata": [{"provenance": {"type": "harness"}}]
                },
            },
        ),
        rollout_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Do it."}],
            },
        ),
    )
    session = parse_codex_rollout(text)
    assert [(i.source, i.label) for i in session.system_prompt_injections] == [
        ("codex:user", "AGENTS.md"),
        ("codex:user", "Turn aborted note"),
    ]
    assert [m.text() for m in session.messages] == ["Do it."]


def test_rollout_update_patch_is_an_edit() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    text = jsonl(
        rollout_line(
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": patch},
        ),
        rollout_line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "c1",
                "output": "Exit code: 0\nOutput:\nM a.py\n",
            },
        ),
    )
    session = parse_codex_rollout(text)
    [call] = session.events
    assert call.tool == "Edit"
    assert call.tool_input == {"changes": [{"path": "a.py", "kind": "update"}], "patch": patch}
    assert (call.status, call.exit_code) == ("ok", 0)


# --- errors (agent-clis.md 5.7) -------------------------------------------------------------


def test_error_and_turn_failed_give_one_error_event_and_session_error() -> None:
    body = '{"error":{"type":"invalid_request_error","message":"bad"}}'
    text = jsonl(
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "agent_message", "text": "Hi."},
        },
        {"type": "error", "message": body},
        {"type": "turn.failed", "error": {"message": body}},
    )
    session = parse_codex(text)
    assert session.error == body
    errors = [e for e in session.events if e.kind == "error"]
    assert [e.text for e in errors] == [body]
    assert session.final_answer == "Hi."
    assert session.token_usage is None


def test_turn_failed_with_a_different_message_is_a_second_event() -> None:
    text = jsonl(
        {"type": "error", "message": "stream disconnected"},
        {"type": "turn.failed", "error": {"message": "turn failed: 400"}},
    )
    session = parse_codex(text)
    assert [e.text for e in session.events] == ["stream disconnected", "turn failed: 400"]
    assert session.error == "turn failed: 400"


def test_non_fatal_error_item_is_an_event_but_not_the_session_error() -> None:
    text = jsonl(
        {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "error", "message": "Model metadata not found"},
        }
    )
    session = parse_codex(text)
    assert [(e.kind, e.detail) for e in session.events] == [("error", {"fatal": False})]
    assert session.error is None


def test_declined_and_unfinished_commands() -> None:
    text = jsonl(
        {
            "type": "item.completed",
            "item": {
                "id": "item_0",
                "type": "command_execution",
                "command": "rm -rf /",
                "status": "declined",
            },
        },
        {
            "type": "item.started",
            "item": {
                "id": "item_1",
                "type": "command_execution",
                "command": "/bin/bash -lc 'sleep 9'",
                "status": "in_progress",
            },
        },
    )
    session = parse_codex(text)
    assert [(e.tool_input["command"], e.status) for e in session.events] == [
        ("rm -rf /", "cancelled"),
        ("sleep 9", "unknown"),
    ]


# --- helpers --------------------------------------------------------------------------------


def test_codex_usage_excludes_cached_from_input() -> None:
    usage = {
        "input_tokens": 100,
        "cached_input_tokens": 40,
        "output_tokens": 9,
        "reasoning_output_tokens": 4,
    }
    assert codex_usage(usage) == TokenUsage(input=60, output=9, cached=40)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/bin/bash -lc 'python3 hello.py'", "python3 hello.py"),
        ("/bin/bash -lc 'python3 test_greet.py && ls'", "python3 test_greet.py && ls"),
        ("bash -c \"echo 'hi there'\"", "echo 'hi there'"),
        (["bash", "-lc", "ls -la"], "ls -la"),
        ("python3 x.py", "python3 x.py"),
        ("/bin/bash -lc 'unbalanced", "/bin/bash -lc 'unbalanced"),
        (["ls", "-la"], "ls -la"),
    ],
)
def test_unwrap_shell(command: str | list[str], expected: str) -> None:
    assert unwrap_shell(command) == expected


def test_rollout_tells_parallel_calls_of_one_model_call_apart() -> None:
    def patch_call(call_id: str, path: str) -> dict[str, object]:
        envelope = f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n"
        return rollout_line(
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": call_id,
                "input": envelope,
            },
        )

    def file_change(item_id: str, path: str) -> dict[str, object]:
        change = {
            "id": item_id,
            "type": "file_change",
            "changes": [{"path": f"/w/{path}", "kind": "add"}],
        }
        return {"type": "item.completed", "item": {**change, "status": "completed"}}

    rollout = jsonl(
        patch_call("c1", "a.py"),
        patch_call("c2", "b.py"),
        rollout_line("token_usage_record", {"usage": {"input_tokens": 5, "output_tokens": 1}}),
        rollout_line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            },
        ),
        rollout_line("token_usage_record", {"usage": {"input_tokens": 7, "output_tokens": 2}}),
    )
    stdout = jsonl(
        file_change("item_0", "a.py"),
        file_change("item_1", "b.py"),
        {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "ok"}},
    )
    assert [e.turn_index for e in parse_codex(stdout).events] == [0, 1, 2]  # stdout's estimate
    session = parse_codex(stdout, rollout=rollout)
    assert [(e.tool_call_id, e.turn_index) for e in session.events] == [
        ("c1", 0),
        ("c2", 0),
        (None, 1),
    ]
    assert session.llm_call_count == 2
    assert session.events[1].tool_input["patch"].startswith("*** Begin Patch\n*** Add File: b.py")
