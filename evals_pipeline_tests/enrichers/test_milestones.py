"""Milestones (time-to-X) and the test-run patterns behind first_test_run / first_test_pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.enrichers.claude_code import parse_claude
from evals_pipeline.enrichers.codex import parse_codex
from evals_pipeline.enrichers.milestones import compute_milestones, is_test_command, tool_command
from evals_pipeline.enrichers.pi_agent import parse_pi
from evals_pipeline.models.events import MILESTONE_NAMES, EnrichedEvent

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def event(seq: int, kind: str = "tool_call", **fields: Any) -> EnrichedEvent:
    return EnrichedEvent(seq=seq, kind=kind, turn_index=seq, **fields)


def bash(seq: int, command: str, **fields: Any) -> EnrichedEvent:
    return event(seq, tool="Bash", tool_input={"command": command}, **fields)


@pytest.mark.parametrize(
    "command",
    [
        "pytest",
        "pytest -q tests/test_x.py",
        "python -m pytest -x",
        "python3 -m unittest discover",
        "python3 test_greet.py && ls",
        "python3 tests/greet_test.py",
        "cd pkg && .venv/bin/pytest",
        "uv run pytest -k slow",
        "PYTHONPATH=src timeout 60 python -m pytest",
        "npm test",
        "npm run test:unit",
        "pnpm test -- --watch=false",
        "yarn test",
        "npx jest src",
        "npx vitest run",
        "go test ./...",
        "cargo test --release",
        "make test",
        "make -C build check",
        "tox -e py311",
        "./gradlew test",
        "bundle exec rspec",
        "ls; pytest 2>&1 | tail -5",
    ],
)
def test_test_commands(command: str) -> None:
    assert is_test_command(command)


@pytest.mark.parametrize(
    "command",
    [
        "python3 hello.py",
        "ls tests/",
        "cat test_greet.py",
        "exit 3",
        "pip install pytest",
        "echo pytest",
        "git commit -m 'make test pass'",
        "npm install",
        "cat jest.config.js",
        "make install",
        "python3 -c 'import test_greet'",
    ],
)
def test_not_test_commands(command: str) -> None:
    assert not is_test_command(command)


def test_tool_command_reads_every_input_shape() -> None:
    assert tool_command({"command": "ls"}) == "ls"
    assert tool_command({"cmd": "ls"}) == "ls"
    assert tool_command({"command": ["bash", "-lc", "ls"]}) == "bash -lc ls"
    assert tool_command("ls") == "ls"
    assert tool_command({"path": "x"}) is None
    assert tool_command(None) is None


def test_milestones_from_events() -> None:
    events = [
        event(0, "message", role="user", text="go", timestamp_ms=1000),
        event(1, tool="Read", timestamp_ms=1100),
        event(2, tool="Edit", timestamp_ms=1200),
        bash(3, "pytest", status="error", exit_code=1, timestamp_ms=1300),
        event(4, tool="Write", timestamp_ms=1400),
        bash(5, "pytest", status="ok", exit_code=0, timestamp_ms=1500),
        event(6, "message", role="assistant", text="done", timestamp_ms=1600),
        event(7, "message", role="assistant", text="", timestamp_ms=1700),
    ]
    milestones = compute_milestones(events, start_ms=1000)
    assert [m.name for m in milestones] == list(MILESTONE_NAMES)
    assert [(m.name, m.seq, m.elapsed_ms) for m in milestones] == [
        ("first_file_read", 1, 100),
        ("first_file_edit", 2, 200),
        ("first_test_run", 3, 300),
        ("first_test_pass", 5, 500),
        ("last_edit", 4, 400),
        ("final_answer", 6, 600),  # the empty message is no answer
    ]
    assert milestones[0].turn_index == 1


def test_exit_code_beats_status_and_status_counts_without_one() -> None:
    failed_despite_ok = bash(0, "pytest", status="ok", exit_code=2)
    passed_without_code = bash(1, "pytest", status="ok")
    milestones = {
        m.name: m.seq for m in compute_milestones([failed_despite_ok, passed_without_code], None)
    }
    assert milestones == {"first_test_run": 0, "first_test_pass": 1}


def test_missing_milestones_and_unknown_times() -> None:
    milestones = compute_milestones([bash(0, "ls", status="ok", timestamp_ms=5)], start_ms=None)
    assert milestones == []
    first, last = compute_milestones([event(0, tool="Write")], start_ms=100)
    assert (first.name, last.name) == ("first_file_edit", "last_edit")
    assert (first.timestamp_ms, first.elapsed_ms) == (None, None)
    assert compute_milestones([], None) == []


@pytest.mark.parametrize(
    "parse",
    [
        lambda: parse_claude(
            (TRANSCRIPTS / "claude.multi_parallel_and_failing_tool.jsonl").read_text()
        ),
        lambda: parse_codex(
            (TRANSCRIPTS / "codex.multi_parallel_and_failing_tool.jsonl").read_text()
        ),
        lambda: parse_pi((TRANSCRIPTS / "pi.multi_parallel_and_failing_tool.jsonl").read_text()),
    ],
    ids=["claude", "codex", "pi"],
)
def test_multi_script_milestones_for_every_agent(parse: Any) -> None:
    session = parse()
    milestones = {m.name: m for m in session.milestones}
    calls = [e for e in session.events if e.kind == "tool_call"]
    assert "first_file_read" not in milestones
    assert milestones["first_file_edit"].seq == calls[0].seq
    assert milestones["last_edit"].seq == calls[1].seq
    # `python3 test_greet.py && ls` is the test run, and it passed; `exit 3` is no test.
    assert milestones["first_test_run"].seq == milestones["first_test_pass"].seq == calls[2].seq
    assert milestones["first_file_edit"].seq < milestones["first_test_run"].seq
    assert milestones["final_answer"].seq == session.events[-1].seq
