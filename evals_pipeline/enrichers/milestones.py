"""Milestones: when a session first read, edited, tested and answered (time-to-X metrics)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from evals_pipeline.models.events import Milestone, MilestoneName


class _Event(Protocol):
    """What milestones read of an event: an EnrichedEvent, or a parser's StreamEvent."""

    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def turn_index(self) -> int: ...
    @property
    def timestamp_ms(self) -> int | None: ...
    @property
    def role(self) -> str | None: ...
    @property
    def text(self) -> str | None: ...
    @property
    def tool(self) -> str | None: ...
    @property
    def tool_input(self) -> Any: ...
    @property
    def status(self) -> str | None: ...
    @property
    def exit_code(self) -> int | None: ...


E = TypeVar("E", bound=_Event)

EDIT_TOOLS = frozenset({"Write", "Edit"})

TEST_COMMAND_PATTERNS: tuple[str, ...] = (
    r"py\.?test\b",  # pytest, py.test
    r"python[\d.]*\s+(?:-\S+\s+)*-m\s+(?:pytest|unittest|nose2?|doctest)\b",
    r"python[\d.]*\s+(?:-\S+\s+)*\S*\btest_\w*\.py\b",  # python3 test_greet.py
    r"python[\d.]*\s+(?:-\S+\s+)*\S*_test\.py\b",  # python3 greet_test.py
    r"(?:tox|nox)\b",
    r"(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?(?:test|t)\b",
    r"(?:jest|vitest|mocha|ava|karma)\b",
    r"go\s+test\b",
    r"cargo\s+(?:test|nextest)\b",
    r"make\s+(?:\S+\s+)*(?:test|check)\b",
    r"(?:mvn|mvnw|gradle|gradlew)\s+(?:\S+\s+)*test\b",
    r"dotnet\s+test\b",
    r"deno\s+test\b",
    r"(?:rspec|phpunit)\b",
    r"rake\s+test\b",
)
"""What a test run looks like: regexes matched at the start of each simple command of a shell
line (split at `&&`, `||`, `;`, `|`, newlines), after launcher prefixes such as `VAR=x`,
`timeout 60`, `uv run`, `npx` or `bundle exec` and any directory on the program
(`.venv/bin/pytest`). docs/events.md lists them in words; keep the two in step."""

_TEST_COMMAND = re.compile("|".join(f"(?:{p})" for p in TEST_COMMAND_PATTERNS))
_SEPARATORS = re.compile(r"&&|\|\||[;|\n&()]")
_LAUNCHER = re.compile(
    r"^(?:\w+=\S*\s+"
    r"|(?:sudo|time|env|nice|exec|npx|bunx)\s+"
    r"|timeout\s+(?:-\S+\s+)*\S+\s+"
    r"|(?:uv|poetry|pipenv|hatch|pdm|rye)\s+run\s+(?:-\S+\s+)*"
    r"|(?:pnpm|yarn|bundle)\s+exec\s+"
    r")+"
)
_PROGRAM_DIR = re.compile(r"^\S*/(?=\S)")


def is_test_command(command: str) -> bool:
    """Whether a shell command runs tests (see `TEST_COMMAND_PATTERNS`)."""
    for segment in _SEPARATORS.split(command):
        segment = _LAUNCHER.sub("", segment.strip())
        segment = _PROGRAM_DIR.sub("", segment)
        if _TEST_COMMAND.match(segment):
            return True
    return False


def tool_command(tool_input: Any) -> str | None:
    """The shell command of a Bash-like call's input (`command` or codex's `cmd`), if any."""
    if isinstance(tool_input, str):
        return tool_input
    if not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(command, list):
        return " ".join(str(part) for part in command)
    return command if isinstance(command, str) else None


def _is_test_run(event: _Event) -> bool:
    if event.kind != "tool_call" or event.tool != "Bash":
        return False
    command = tool_command(event.tool_input)
    return command is not None and is_test_command(command)


def _passed(event: _Event) -> bool:
    # The exit code is the better witness when a stream reports both.
    if event.exit_code is not None:
        return event.exit_code == 0
    return event.status == "ok"


def compute_milestones(events: Sequence[E], start_ms: int | None) -> list[Milestone]:
    """The milestones a session reached, in `MILESTONE_NAMES` order; missing ones are left out.

    `elapsed_ms` counts from `start_ms` when both it and the event's timestamp are known.
    """
    tool_calls = [e for e in events if e.kind == "tool_call"]
    edits = [e for e in tool_calls if e.tool in EDIT_TOOLS]
    test_runs = [e for e in tool_calls if _is_test_run(e)]
    answers = [e for e in events if e.kind == "message" and e.role == "assistant" and e.text]
    found: list[tuple[MilestoneName, Iterable[E]]] = [
        ("first_file_read", (e for e in tool_calls if e.tool == "Read")),
        ("first_file_edit", edits),
        ("first_test_run", test_runs),
        ("first_test_pass", (e for e in test_runs if _passed(e))),
        ("last_edit", reversed(edits)),
        ("final_answer", reversed(answers)),
    ]
    milestones: list[Milestone] = []
    for name, candidates in found:
        event = next(iter(candidates), None)
        if event is not None:
            milestones.append(_milestone(name, event, start_ms))
    return milestones


def _milestone(name: MilestoneName, event: _Event, start_ms: int | None) -> Milestone:
    elapsed = None
    if event.timestamp_ms is not None and start_ms is not None:
        elapsed = event.timestamp_ms - start_ms
    return Milestone(
        name=name,
        seq=event.seq,
        turn_index=event.turn_index,
        timestamp_ms=event.timestamp_ms,
        elapsed_ms=elapsed,
    )
