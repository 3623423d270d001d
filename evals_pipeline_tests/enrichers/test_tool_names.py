"""Canonical tool names: the same script gives the same tool sequence for every agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.agents.registry import STREAMS, agent_tool
from evals_pipeline.enrichers.claude_code import parse_claude
from evals_pipeline.enrichers.codex import parse_codex
from evals_pipeline.enrichers.pi_agent import parse_pi
from evals_pipeline.enrichers.tool_names import patch_kinds
from evals_pipeline.models.events import CANONICAL_TOOLS

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
DOC = Path(__file__).parents[2] / "docs" / "events.md"


def read(name: str) -> str:
    return (TRANSCRIPTS / name).read_text()


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("", ["Write", "Bash"]),
        (".multi_parallel_and_failing_tool", ["Write", "Write", "Bash", "Bash"]),
    ],
    ids=["hello", "multi"],
)
def test_same_script_same_canonical_tool_sequence_for_all_agents(
    stem: str, expected: list[str]
) -> None:
    sequences = {
        "claude": parse_claude(read(f"claude{stem}.jsonl")).tool_sequence(),
        "codex": parse_codex(read(f"codex{stem}.jsonl")).tool_sequence(),
        "pi": parse_pi(read(f"pi{stem}.jsonl")).tool_sequence(),
    }
    assert sequences == {"claude": expected, "codex": expected, "pi": expected}


def test_native_names_differ_where_canonical_ones_agree() -> None:
    natives = {
        "claude": [e.native_tool for e in parse_claude(read("claude.jsonl")).events if e.tool],
        "codex": [
            e.native_tool
            for e in parse_codex(read("codex.jsonl"), read("codex.rollout.jsonl")).events
            if e.tool
        ],
        "pi": [e.native_tool for e in parse_pi(read("pi.jsonl")).events if e.tool],
    }
    assert natives == {
        "claude": ["Write", "Bash"],
        "codex": ["apply_patch", "exec_command"],
        "pi": ["write", "bash"],
    }


def test_every_table_maps_into_the_canonical_names() -> None:
    for stream in STREAMS.values():
        assert set(stream.tool_names.names.values()) <= set(CANONICAL_TOOLS)


def test_every_native_name_is_in_the_doc_table() -> None:
    doc = DOC.read_text()
    for name in [name for stream in STREAMS.values() for name in stream.tool_names.native()]:
        assert f"`{name}`" in doc or f"`{name.removesuffix('_call')}(_call)`" in doc, name


@pytest.mark.parametrize(
    ("kind", "native", "expected"),
    [
        ("claude-code", "Read", "Read"),
        ("claude-code", "MultiEdit", "Edit"),
        ("claude-code", "NotebookEdit", "Edit"),
        ("claude-code", "Grep", "Search"),
        ("claude-code", "Glob", "Search"),
        ("claude-code", "LS", "List"),
        ("claude-code", "WebFetch", "Fetch"),
        ("claude-code", "WebSearch", "WebSearch"),
        ("claude-code", "Agent", "Task"),
        ("claude-code", "Task", "Task"),
        ("claude-code", "TodoWrite", "Todo"),
        ("claude-code", "TaskCreate", "Todo"),
        ("claude-code", "TaskStop", "Other"),
        ("claude-code", "Skill", "Skill"),
        ("claude-code", "mcp__github__create_issue", "Other"),
        ("codex", "exec_command", "Bash"),
        ("codex", "shell", "Bash"),
        ("codex", "shell_command", "Bash"),
        ("codex", "local_shell", "Bash"),
        ("codex", "command_execution", "Bash"),
        ("codex", "web_search", "WebSearch"),
        ("codex", "view_image", "Read"),
        ("codex", "update_plan", "Todo"),
        ("codex", "mcp_tool_call", "Other"),
        ("pi-agent", "read", "Read"),
        ("pi-agent", "edit", "Edit"),
        ("pi-agent", "grep", "Search"),
        ("pi-agent", "find", "Search"),
        ("pi-agent", "ls", "List"),
        ("pi-agent", "Bash", "Bash"),  # case-insensitive fallback
        ("pi-agent", "teleport", "Other"),
        ("no-such-agent", "Read", "Other"),
    ],
)
def test_agent_tool(kind: str, native: str, expected: str) -> None:
    assert agent_tool(kind, native, None) == expected


ADD = "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\n"
UPDATE = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n"
DELETE = "*** Begin Patch\n*** Delete File: a.py\n*** End Patch\n"


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"changes": [{"path": "a", "kind": "add"}, {"path": "b", "kind": "add"}]}, "Write"),
        ({"changes": [{"path": "a", "kind": "add"}, {"path": "b", "kind": "update"}]}, "Edit"),
        ({"changes": [{"path": "a", "kind": "delete"}]}, "Edit"),
        ({"changes": {"/w/a.py": {"type": "add", "content": "x"}}}, "Write"),
        (ADD, "Write"),
        (UPDATE, "Edit"),
        (DELETE, "Edit"),
        (ADD + UPDATE, "Edit"),
        ({"input": ADD}, "Write"),
        ({"changes": [], "patch": ADD}, "Write"),
        (None, "Edit"),
        ("not a patch", "Edit"),
    ],
)
def test_codex_patches_are_write_only_when_they_only_add(tool_input: object, expected: str) -> None:
    assert agent_tool("codex", "apply_patch", tool_input) == expected
    assert agent_tool("codex", "file_change", tool_input) == expected


def test_patch_kinds() -> None:
    assert patch_kinds(ADD + UPDATE + DELETE) == ["add", "update", "delete"]
    assert patch_kinds(42) == []
