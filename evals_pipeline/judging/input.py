"""What an LLM judge is shown about one trial: the task, the final answer, the diff and a compact
transcript, cut to a budget. The rendered text is also the grounding corpus (judging.md §3): a
quote counts only if it occurs in exactly what the judge saw.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from evals_pipeline.enrichers.milestones import EDIT_TOOLS, is_test_command, tool_command
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.messages import Message

TOOL_OUTPUT_CHARS = 1_500
EVENT_TEXT_CHARS = 1_200


@dataclass(frozen=True)
class JudgeInput:
    """The rendered input of one trial and the pieces grounding checks quotes against."""

    text: str
    sources: dict[str, str] = field(default_factory=dict)
    """`event:<seq>` → that event's text as shown, for checking the source a quote cites."""
    post_edit_runs: tuple[str, ...] = ()
    """Outputs (as shown) of test/build commands run after the last edit."""


def task_text(case: ResolvedCase) -> str:
    """The task as the agent got it, with the criteria and expected output when the suite has them."""
    parts = [case.prompt.strip()]
    if case.criteria.strip():
        parts.append(f"Criteria:\n{case.criteria.strip()}")
    expected = "\n".join(m.text() for m in case.expected_output if m.text())
    if expected.strip():
        parts.append(f"Expected output:\n{expected.strip()}")
    return "\n\n".join(parts)


def build_judge_input(
    case: ResolvedCase,
    *,
    final_answer: str,
    diff: str | None,
    events: Sequence[EnrichedEvent],
    messages: Sequence[Message] = (),
    max_chars: int = 60_000,
) -> JudgeInput:
    """Render the trial in sections: the task, then the agent's work (see `render_work`)."""
    task = f"## Task\n{_cut(task_text(case), max_chars // 6)}\n\n"
    work = render_work(
        final_answer=final_answer,
        diff=diff,
        events=events,
        messages=messages,
        max_chars=max_chars - len(task),
    )
    return JudgeInput(task + work.text, work.sources, work.post_edit_runs)


def render_work(
    *,
    final_answer: str,
    diff: str | None,
    events: Sequence[EnrichedEvent],
    messages: Sequence[Message] = (),
    max_chars: int = 60_000,
) -> JudgeInput:
    """An agent's final answer, diff and transcript; the transcript gets what the others leave.

    Long tool outputs keep their head and tail (test summaries sit at the end); a transcript over
    budget keeps its first and last events with the middle left out and marked.
    """
    answer = _cut(final_answer.strip() or "(no final answer)", max_chars // 5)
    patch = _cut((diff or "").strip() or "(no file changes)", max_chars // 3)
    fixed = f"## Final answer\n{answer}\n\n## Diff\n{patch}\n\n## Transcript\n"
    lines, sources, runs = _transcript(events, messages)
    transcript = _fit(lines, max(1_000, max_chars - len(fixed)))
    shown = set(transcript)
    return JudgeInput(
        text=fixed + "\n".join(transcript),
        sources={key: text for key, text in sources.items() if text in shown},
        post_edit_runs=tuple(run for run in runs if run in shown),
    )


def _transcript(
    events: Sequence[EnrichedEvent], messages: Sequence[Message]
) -> tuple[list[str], dict[str, str], list[str]]:
    if not events:
        shown = [
            f"[message:{i}] {m.role}: {_cut(m.text(), EVENT_TEXT_CHARS)}"
            for i, m in enumerate(messages)
            if m.text().strip()
        ]
        return shown, {}, []
    last_edit = max((e.seq for e in events if e.tool in EDIT_TOOLS), default=-1)
    lines: list[str] = []
    sources: dict[str, str] = {}
    runs: list[str] = []
    for event in events:
        line = _render(event)
        if line is None:
            continue
        lines.append(line)
        sources[f"event:{event.seq}"] = line
        command = tool_command(event.tool_input) if event.tool == "Bash" else None
        if event.seq > last_edit and command and _is_check(command):
            runs.append(line)
    return lines, sources, runs


def _is_check(command: str) -> bool:
    return is_test_command(command) or any(
        word in command for word in ("build", "make", "tsc", "cargo check", "go vet")
    )


def _render(event: EnrichedEvent) -> str | None:
    head = f"[event:{event.seq}]"
    if event.kind == "message" and event.text and event.role in ("user", "assistant"):
        return f"{head} {event.role}: {_cut(event.text, EVENT_TEXT_CHARS)}"
    if event.kind == "tool_call":
        command = tool_command(event.tool_input) if event.tool == "Bash" else None
        call = command if command else _compact(event.tool_input)
        status = f"exit {event.exit_code}" if event.exit_code is not None else event.status or "?"
        output = _cut((event.tool_output or "").strip(), TOOL_OUTPUT_CHARS)
        body = f"\n{output}" if output else ""
        return f"{head} {event.tool or event.native_tool}: {call} → {status}{body}"
    if event.kind in ("error", "retry") and event.text:
        return f"{head} {event.kind}: {_cut(event.text, 300)}"
    return None


def _compact(value: object) -> str:
    if isinstance(value, dict):
        path = value.get("file_path") or value.get("path")
        if isinstance(path, str):
            return path
    return _cut(json.dumps(value, default=str, ensure_ascii=False), 200)


def _cut(text: str, limit: int) -> str:
    """Head and tail of `text` within `limit` characters, the cut marked."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40)
    head, tail = keep // 3, keep - keep // 3
    return f"{text[:head]}\n[... {len(text) - keep} characters left out ...]\n{text[-tail:]}"


def _fit(lines: list[str], budget: int) -> list[str]:
    """The lines within `budget` characters: as many from the end as from the start."""
    if sum(len(line) + 1 for line in lines) <= budget:
        return lines
    head: list[str] = []
    tail: list[str] = []
    used = 60
    i, j = 0, len(lines) - 1
    while i <= j:
        pick_tail = len(tail) <= len(head)
        line = lines[j] if pick_tail else lines[i]
        if used + len(line) + 1 > budget:
            break
        used += len(line) + 1
        if pick_tail:
            tail.insert(0, line)
            j -= 1
        else:
            head.append(line)
            i += 1
    left_out = len(lines) - len(head) - len(tail)
    return [*head, f"[... {left_out} events left out ...]", *tail]
