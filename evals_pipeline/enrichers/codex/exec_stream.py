"""`codex exec --json` stdout into the canonical event model.

Stdout prints items (messages, command executions, file changes) and per-turn usage, but no
model, timing or exact tool call; given the run's rollout file, each item is paired with the
rollout's record of it to fill those gaps. Reference: agent-clis.md sec 5.
"""

from __future__ import annotations

import json
from typing import Any

from evals_pipeline.enrichers.builder import ParsedStream, SessionBuilder, StreamEvent, tolerate
from evals_pipeline.enrichers.codex.fields import (
    AGENT_KIND,
    ITEM_FAMILY,
    TOOL_NAMES,
    Family,
    as_list,
    as_str,
    codex_usage,
    tool_status,
    unwrap_shell,
)
from evals_pipeline.enrichers.codex.records import (
    Entry,
    Rollout,
    apply_rollout_facts,
    emit_call,
    emit_entry,
    emit_rollout,
)
from evals_pipeline.enrichers.codex.rollout import is_rollout, read_rollout
from evals_pipeline.enrichers.jsonl import Source, iter_jsonl
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import TokenUsage


def parse_codex(text: str, rollout: str | None = None) -> EnrichedSession:
    """`codex_stream` of texts, in the canonical models."""
    return codex_stream(text, rollout).enriched()


def codex_stream(source: Source, rollout: Source | None = None) -> ParsedStream:
    """Parse `codex exec --json` stdout, enriched by the run's rollout file when given.

    A rollout passed as `source` is recognised and parsed as `parse_codex_rollout` would.
    """
    builder = SessionBuilder(AGENT_KIND, TOOL_NAMES)
    # Held parsed (the text is not): which file it is, and the pairing, need every line.
    lines = list(iter_jsonl(source, builder.warnings))
    if is_rollout([line for _, line in lines]):
        return emit_rollout(builder, read_rollout(lines, builder.warnings))
    facts = None
    if rollout is not None:
        rollout_warnings: list[str] = []
        facts = read_rollout(list(iter_jsonl(rollout, rollout_warnings)), rollout_warnings)
        builder.warnings.extend(f"rollout {warning}" for warning in rollout_warnings)
    return _ExecParser(builder, facts).parse(lines)


class _ExecParser:
    """Stdout items in order; with a rollout, each item is paired with the rollout's record of
    the same call (by order within its family) for its exact input, timing and model call."""

    def __init__(self, builder: SessionBuilder, rollout: Rollout | None) -> None:
        self.b = builder
        self.rollout = rollout
        self.pending = list(rollout.entries) if rollout else []
        self.turn = 0  # model call index as stdout alone suggests it
        self.after_tool = False
        self.turn_used = False
        self.open: dict[str, StreamEvent] = {}  # item id -> tool call event
        self.usage: TokenUsage | None = None
        self.answer: str | None = None

    def parse(self, lines: list[tuple[int, dict[str, Any]]]) -> ParsedStream:
        for number, line in lines:
            with tolerate(number, self.b.warnings):
                self._line(line)
        return self._finish()

    def _line(self, line: dict[str, Any]) -> None:
        session = self.b.session
        kind = line.get("type")
        if kind == "thread.started":
            session.session_id = as_str(line.get("thread_id")) or session.session_id
        elif kind == "turn.started":
            if self.turn_used:  # a resumed thread: the next prompt starts a new model call
                self._next_turn()
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = line.get("item")
            if isinstance(item, dict):
                self._item(item, completed=kind == "item.completed")
        elif kind == "turn.completed":
            usage = codex_usage(line.get("usage"))
            if usage is not None:
                self.usage = (self.usage or TokenUsage()) + usage
        elif kind in ("turn.failed", "error"):
            self._fatal(line)

    def _next_turn(self) -> None:
        self.turn += 1
        self.after_tool = False
        self.turn_used = False

    def _step(self) -> int:
        """The model call of the next item: after a tool result only a new call can follow."""
        if self.after_tool:
            self._next_turn()
        self.turn_used = True
        return self.turn

    def _match(self, kind: str, family: Family | None = None) -> Entry | None:
        """The rollout's record of this item; context injected before it is emitted first."""
        for index, entry in enumerate(self.pending):
            if entry.kind == kind and (family is None or entry.family == family):
                earlier = self.pending[:index]
                for context in earlier:
                    if context.kind in ("inject", "user"):
                        emit_entry(self.b, context)
                # Records stdout skipped stay for later items: the two orders may differ.
                rest = [e for e in earlier if e.kind not in ("inject", "user")]
                self.pending[: index + 1] = rest
                return entry
        return None

    def _turn_of(self, entry: Entry | None) -> int:
        """The item's model call: the rollout's when it has the item, else stdout's estimate."""
        if entry is None:
            return self._step()
        self.turn = max(self.turn, entry.turn)
        self.after_tool, self.turn_used = False, True
        return entry.turn

    def _item(self, item: dict[str, Any], *, completed: bool) -> None:
        item_type = item.get("type")
        item_id = as_str(item.get("id")) or f"item-{len(self.b.events)}"
        if item_type == "agent_message":
            if completed and isinstance(item.get("text"), str):
                entry = self._match("assistant")
                turn = self._turn_of(entry)
                self.b.message("assistant", item["text"], turn_index=turn, timestamp_ms=_at(entry))
                self.answer = item["text"]
        elif item_type in ITEM_FAMILY:
            self._tool_item(item_id, str(item_type), item, completed)
        elif item_type == "error" and completed:
            text = as_str(item.get("message")) or "error"
            self.b.error(text, turn_index=self.turn, detail={"fatal": False})

    def _tool_item(self, item_id: str, item_type: str, item: dict[str, Any], done: bool) -> None:
        event = self.open.get(item_id)
        if event is None:
            entry = self._match("call", ITEM_FAMILY[item_type])
            turn = self._turn_of(entry)
            if entry is not None:
                emit_call(self.b, entry, entry.call_id or item_id, turn)
                event = self.b.events[-1]
            else:
                event = self.b.tool_call(
                    item_type, _item_input(item_type, item), call_id=item_id, turn_index=turn
                )
            self.open[item_id] = event
        if not done:
            return
        self.after_tool = True
        if event.native_tool == item_type:  # no rollout record: the item is all we know
            event.tool_input = _item_input(item_type, item)
        elif item_type == "file_change" and isinstance(event.tool_input, dict):
            event.tool_input = {
                **event.tool_input,
                "changes": _item_input(item_type, item)["changes"],
            }
        exit_code = item.get("exit_code") if isinstance(item.get("exit_code"), int) else None
        output = _item_output(item)
        event.tool_output = output if output is not None else event.tool_output
        event.exit_code = exit_code if exit_code is not None else event.exit_code
        event.status = tool_status(item.get("status"), event.exit_code)

    def _fatal(self, line: dict[str, Any]) -> None:
        error = line.get("error")
        text = as_str(error.get("message")) if isinstance(error, dict) else None
        text = text or as_str(line.get("message")) or str(line.get("type"))
        # `error` then `turn.failed` usually say the same thing: one event for both.
        last = self.b.events[-1] if self.b.events else None
        if not (last and last.kind == "error" and last.text == text):
            self.b.error(text, turn_index=self.turn, detail={"type": line.get("type")})
        self.b.session.error = text

    def _finish(self) -> ParsedStream:
        session = self.b.session
        for entry in self.pending:  # context of turns the stdout never reached
            if entry.kind in ("inject", "user"):
                emit_entry(self.b, entry)
        session.token_usage = self.usage
        if self.rollout is not None:
            apply_rollout_facts(self.b, self.rollout)
            for ms in self.rollout.times:
                self.b.seen(ms)
            session.session_id = session.session_id or self.rollout.session_id
        # Without a (complete) rollout the count is stdout's estimate, in which parallel tool
        # calls of one model call count as several.
        turns = {e.turn_index for e in self.b.events if e.role == "assistant"}
        session.llm_call_count = max(session.llm_call_count, len(turns))
        return self.b.finish(answer=self.answer)


def _item_input(item_type: str, item: dict[str, Any]) -> Any:
    if item_type == "command_execution":
        return {"command": unwrap_shell(item.get("command"))}
    if item_type == "file_change":
        return {
            "changes": [
                {"path": c.get("path"), "kind": c.get("kind")}
                for c in as_list(item.get("changes"))
                if isinstance(c, dict)
            ]
        }
    if item_type == "web_search":
        return {"query": item.get("query")}
    if item_type == "todo_list":
        return {"items": item.get("items")}
    if item_type == "mcp_tool_call":
        return {k: item.get(k) for k in ("server", "tool", "arguments")}
    return None


def _item_output(item: dict[str, Any]) -> str | None:
    for key in ("aggregated_output", "result", "error"):
        value = item.get(key)
        if isinstance(value, str):
            return value
        if value is not None:
            return json.dumps(value, ensure_ascii=False)
    return None


def _at(entry: Entry | None) -> int | None:
    return entry.ms if entry is not None else None
