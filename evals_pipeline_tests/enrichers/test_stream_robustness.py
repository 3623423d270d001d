"""Streams cut short, garbage lines, unknown events, odd shapes: warnings, never exceptions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evals_pipeline.agents.registry import (
    STREAMS,
    detect_stream_format,
    detect_stream_kind,
    parse_stream,
)
from evals_pipeline.enrichers.jsonl import iter_jsonl, read_jsonl

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
FIXTURES = {
    "claude.jsonl": ("claude-code", "claude-stream"),
    "claude.multi_parallel_and_failing_tool.jsonl": ("claude-code", "claude-stream"),
    "codex.jsonl": ("codex", "codex-exec"),
    "codex.multi_parallel_and_failing_tool.jsonl": ("codex", "codex-exec"),
    "codex.rollout.jsonl": ("codex", "codex-rollout"),
    "pi.jsonl": ("pi-agent", "pi-json"),
    "pi.multi_parallel_and_failing_tool.jsonl": ("pi-agent", "pi-json"),
    "pi.session.jsonl": ("pi-agent", "pi-session"),
}
MID_LINE_CUTS = 25


# --- jsonl ----------------------------------------------------------------------------------


def test_iter_jsonl_warns_and_skips_bad_lines() -> None:
    text = '{"a": 1}\n\nnot json\n[1, 2]\n"text"\n{"b": 2}\r\n{"c": 3, "d": [1,'
    lines, warnings = read_jsonl(text)
    assert lines == [(1, {"a": 1}), (6, {"b": 2})]
    assert [w.split(":")[0] for w in warnings] == ["line 3", "line 4", "line 5", "line 7"]
    assert "not valid JSON" in warnings[0]
    assert "expected a JSON object, got list" in warnings[1]
    assert "expected a JSON object, got str" in warnings[2]
    assert "truncated JSON" in warnings[3]


def test_iter_jsonl_keeps_line_separators_inside_strings() -> None:
    # JSON strings may hold U+2028 raw; str.splitlines() would cut the line there.
    text = json.dumps({"text": "a\u2028b\x85c"}, ensure_ascii=False) + "\n"
    warnings: list[str] = []
    assert list(iter_jsonl(text, warnings)) == [(1, {"text": "a\u2028b\x85c"})]
    assert warnings == []


def test_iter_jsonl_last_line_without_newline_is_fine_when_complete() -> None:
    assert read_jsonl('{"a": 1}') == ([(1, {"a": 1})], [])
    assert read_jsonl("") == ([], [])


def test_iter_jsonl_survives_absurd_nesting() -> None:
    lines, warnings = read_jsonl("[" * 100_000 + "\n" + '{"ok": true}\n')
    assert lines == [(2, {"ok": True})]
    assert len(warnings) == 1


# --- every fixture cut at every line boundary and at random points mid-line ----------------


def cut_points(data: bytes, seed: int) -> tuple[list[int], list[int]]:
    boundaries = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    rng = random.Random(seed)
    starts = [0, *boundaries[:-1]]
    mid_line = []
    for _ in range(MID_LINE_CUTS):
        line = rng.randrange(len(starts))
        end = boundaries[line] - 1  # the newline
        if end - starts[line] > 1:
            mid_line.append(rng.randrange(starts[line] + 1, end))
    return [0, *boundaries], mid_line


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_cut_anywhere_parses_without_exceptions(name: str) -> None:
    kind, _ = FIXTURES[name]
    data = (TRANSCRIPTS / name).read_bytes()
    full = parse_stream(kind, data.decode())
    assert full.parse_warnings == []
    boundaries, mid_line = cut_points(data, seed=len(name))
    tool_counts = []
    for offset in boundaries:
        session = parse_stream(kind, data[:offset].decode(errors="replace"))
        assert session.parse_warnings == [], offset
        tool_counts.append(len(session.tool_sequence()))
    # A longer prefix never knows fewer tool calls.
    assert tool_counts == sorted(tool_counts)
    assert tool_counts[-1] == len(full.tool_sequence())
    for offset in mid_line:
        # A cut may split a UTF-8 character: decoding replaces it, parsing still copes.
        session = parse_stream(kind, data[:offset].decode(errors="replace"))
        assert any("truncated JSON" in w for w in session.parse_warnings), offset
        assert len(session.events) <= len(full.events)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_garbage_and_unknown_events_are_tolerated(name: str) -> None:
    kind, _ = FIXTURES[name]
    lines = (TRANSCRIPTS / name).read_text().splitlines()
    noisy: list[str] = []
    for line in lines:
        noisy.append(line)
        noisy.append(json.dumps({"type": "brand_new_event", "payload": {"x": 1}, "message": 7}))
    noisy.insert(1, "Warning: something printed to stdout")
    noisy.insert(3, "[1, 2, 3]")
    noisy.insert(5, '{"type": {"not": "a string"}}')
    session = parse_stream(kind, "\n".join(noisy) + "\n")
    clean = parse_stream(kind, "\n".join(lines) + "\n")
    assert session.tool_sequence() == clean.tool_sequence()
    assert session.final_answer == clean.final_answer
    assert session.token_usage == clean.token_usage
    warned = {w.split(":")[0] for w in session.parse_warnings}
    assert {"line 2", "line 4"} <= warned


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        ("claude-code", {"type": "assistant", "message": {"id": "m", "content": True}}),
        (
            "claude-code",
            {"type": "user", "message": {"content": [{"type": "tool_result", "content": 5}]}},
        ),
        ("claude-code", {"type": "result", "usage": "lots", "is_error": True, "result": 3}),
        ("codex", {"type": "item.completed", "item": {"type": "command_execution", "command": 5}}),
        ("codex", {"type": "item.completed", "item": {"type": "file_change", "changes": "x"}}),
        ("codex", {"type": "turn.completed", "usage": {"input_tokens": "many"}}),
        (
            "codex",
            {"timestamp": 5, "type": "response_item", "payload": {"type": "message", "content": 1}},
        ),
        (
            "pi-agent",
            {"type": "message_end", "message": {"role": "assistant", "content": "x", "usage": 3}},
        ),
        ("pi-agent", {"type": "message_end", "message": {"role": ["user"], "content": None}}),
        ("pi-agent", {"type": "tool_execution_end", "toolCallId": None, "result": [1]}),
    ],
)
def test_odd_field_shapes_do_not_raise(kind: str, line: dict[str, object]) -> None:
    session = parse_stream(kind, json.dumps(line) + "\n")
    assert session.agent_kind == kind


@pytest.mark.parametrize("kind", sorted(STREAMS))
@pytest.mark.parametrize("text", ["", "\n\n", "   \n"])
def test_empty_stream_is_an_empty_session(kind: str, text: str) -> None:
    session = parse_stream(kind, text)
    assert session.agent_kind == kind
    assert (session.events, session.messages, session.milestones) == ([], [], [])
    assert (session.final_answer, session.session_id, session.token_usage) == ("", None, None)
    assert (session.llm_call_count, session.retries, session.error) == (0, 0, None)
    assert (session.start_ms, session.end_ms, session.cost_usd) == (None, None, None)
    assert session.parse_warnings == []


# --- the registry -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_detect_stream_kind_and_format(name: str) -> None:
    kind, stream_format = FIXTURES[name]
    text = (TRANSCRIPTS / name).read_text()
    assert detect_stream_kind(text) == kind
    assert detect_stream_format(text) == stream_format
    # A head of the file is enough (what an importer reads first), even cut mid-line.
    head = "".join(text.splitlines(keepends=True)[:3])
    assert detect_stream_format(head + text[len(head) : len(head) + 10]) == stream_format


@pytest.mark.parametrize(
    "text",
    ["", "hello\nworld\n", '{"type": "something"}\n', '{"a": 1}\n[1]\n', "{" * 50],
)
def test_detect_unknown_streams(text: str) -> None:
    assert detect_stream_kind(text) is None


def test_detect_claude_on_disk_transcript() -> None:
    line = {
        "parentUuid": None,
        "sessionId": "s",
        "type": "user",
        "message": {"role": "user", "content": "hi"},
    }
    assert detect_stream_format(json.dumps(line)) == "claude-transcript"


def test_parse_stream_routes_rollouts_and_rejects_unknown_kinds() -> None:
    rollout = (TRANSCRIPTS / "codex.rollout.jsonl").read_text()
    stdout = (TRANSCRIPTS / "codex.jsonl").read_text()
    assert parse_stream("codex", stdout, rollout=rollout).model == "gpt-5.5"
    assert parse_stream("codex", rollout).model == "gpt-5.5"
    claude = parse_stream(
        "claude-code", (TRANSCRIPTS / "claude.jsonl").read_text(), rollout=rollout
    )
    assert claude.parse_warnings == [
        "a rollout file only applies to codex, not claude-code: ignored"
    ]
    with pytest.raises(ValueError, match="no stream parser for agent kind 'aider'"):
        parse_stream("aider", "")


def test_a_cut_rollout_still_enriches_the_stdout() -> None:
    rollout = (TRANSCRIPTS / "codex.rollout.jsonl").read_text()
    stdout = (TRANSCRIPTS / "codex.jsonl").read_text()
    lines = rollout.splitlines(keepends=True)
    cut = "".join(lines[:12]) + lines[12][:40]  # after the turn context and the first call
    session = parse_stream("codex", stdout, rollout=cut)
    assert session.tool_sequence() == ["Write", "Bash"]
    assert session.model == "gpt-5.5"
    assert session.llm_call_count == 3
    assert [e.turn_index for e in session.events[-4:]] == [0, 0, 1, 2]
    assert session.events[-3].native_tool == "apply_patch"  # from the rollout
    assert session.events[-2].native_tool == "command_execution"  # beyond the cut: stdout only
    assert [w.split(":")[0] for w in session.parse_warnings] == ["rollout line 13"]


def test_a_character_cut_in_half_in_a_stream_becomes_u_fffd_with_a_warning() -> None:
    # JSON.stringify writes half a UTF-16 pair as an escape: valid JSON, but not Unicode.
    lines = (TRANSCRIPTS / "claude.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"text"' in line.replace(" ", ""))
    lines[at] = (
        lines[at]
        .replace('"text": "', '"text": "cut \\ud83d ', 1)
        .replace('"text":"', '"text":"cut \\ud83d ', 1)
    )
    session = parse_stream("claude-code", "\n".join(lines) + "\n")
    texts = [m.text() for m in session.messages]
    assert any(text.startswith("cut \ufffd ") for text in texts), texts
    assert "lone UTF-16 surrogates" in " ".join(session.parse_warnings)
