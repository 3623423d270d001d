"""Codex CLI's JSONL into the canonical event model.

`codex exec --json` prints items (messages, command executions, file changes) and per-turn
usage, but no model, timing or exact tool call. Codex's own session log, the rollout file
(`$CODEX_HOME/sessions/.../rollout-*.jsonl`), has all of that; given with the stdout it fills
those gaps, and alone it is a complete session (for importing past runs).
Reference: agent-clis.md sec 5.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from evals_pipeline.enrichers.builder import SessionBuilder, tolerate
from evals_pipeline.enrichers.cli_output import iso_to_ms
from evals_pipeline.enrichers.jsonl import iter_jsonl
from evals_pipeline.models.events import EnrichedEvent, EnrichedSession
from evals_pipeline.models.messages import TokenUsage, ToolStatus, content_text

AGENT_KIND = "codex"
ROLLOUT_LINE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "token_usage_record"}
)

# Which rollout tool calls an `exec --json` item stands for, to pair the two by order.
Family = Literal["command", "patch", "web_search", "plan", "mcp", "other"]
_ITEM_FAMILY: dict[str, Family] = {
    "command_execution": "command",
    "file_change": "patch",
    "web_search": "web_search",
    "todo_list": "plan",
    "mcp_tool_call": "mcp",
}
_NATIVE_FAMILY: dict[str, Family] = {
    "exec_command": "command",
    "shell": "command",
    "shell_command": "command",
    "local_shell_call": "command",
    "apply_patch": "patch",
    "web_search_call": "web_search",
    "update_plan": "plan",
}
_SHELLS = frozenset({"bash", "sh", "zsh"})
_TAG = re.compile(r"^\s*<([\w -]+)>")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT_CODE = re.compile(r"(?:Exit code:|Process exited with code) (-?\d+)")


def parse_codex(text: str, rollout: str | None = None) -> EnrichedSession:
    """Parse `codex exec --json` stdout, enriched by the run's rollout file when given.

    A rollout passed as `text` is recognised and parsed as `parse_codex_rollout` would.
    """
    builder = SessionBuilder(AGENT_KIND)
    lines = list(iter_jsonl(text, builder.warnings))
    if is_rollout([line for _, line in lines]):
        return _emit_rollout(builder, _read_rollout(lines, builder.warnings))
    facts = None
    if rollout is not None:
        rollout_warnings: list[str] = []
        facts = _read_rollout(list(iter_jsonl(rollout, rollout_warnings)), rollout_warnings)
        builder.warnings.extend(f"rollout {warning}" for warning in rollout_warnings)
    return _ExecParser(builder, facts).parse(lines)


def parse_codex_rollout(text: str) -> EnrichedSession:
    """Parse a codex rollout file alone (an existing session, without its stdout)."""
    builder = SessionBuilder(AGENT_KIND)
    lines = list(iter_jsonl(text, builder.warnings))
    return _emit_rollout(builder, _read_rollout(lines, builder.warnings))


def is_rollout(lines: list[dict[str, Any]]) -> bool:
    """Whether parsed lines are a rollout file (`{timestamp, type, payload}`) not exec output."""
    return any(
        _str(line.get("type")) in ROLLOUT_LINE_TYPES and "payload" in line for line in lines[:5]
    )


def codex_usage(usage: Any) -> TokenUsage | None:
    """OpenAI usage in the AgentV convention: `input` excludes the cached part; output includes
    reasoning tokens (codex counts them in output_tokens already)."""
    if not isinstance(usage, dict):
        return None
    cached = _int(usage.get("cached_input_tokens"))
    return TokenUsage(
        input=max(_int(usage.get("input_tokens")) - cached, 0),
        output=_int(usage.get("output_tokens")),
        cached=cached,
    )


def unwrap_shell(command: Any) -> str:
    """The command a codex shell call runs, without the `/bin/bash -lc '...'` wrapper."""
    argv: list[str]
    if isinstance(command, list):
        argv = [str(part) for part in command]
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return command
    else:
        return ""
    if len(argv) == 3 and posixpath.basename(argv[0]) in _SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return command if isinstance(command, str) else shlex.join(argv)


# --- the rollout file ----------------------------------------------------------------------


@dataclass
class _Entry:
    """One thing the rollout records, in file order, with the model call it belongs to."""

    kind: Literal["user", "assistant", "call", "inject", "error", "retry"]
    turn: int
    ms: int | None
    text: str = ""
    source: str = ""
    label: str = ""
    message_id: str | None = None
    # tool calls
    call_id: str | None = None
    native: str = ""
    family: Family = "other"
    tool_input: Any = None
    output: str | None = None
    status: ToolStatus | None = None
    exit_code: int | None = None
    end_ms: int | None = None


@dataclass
class _Rollout:
    entries: list[_Entry] = field(default_factory=list)
    session_id: str | None = None
    model: str | None = None
    duration_ms: int | None = None
    usage: TokenUsage | None = None
    turn_usage: dict[int, TokenUsage] = field(default_factory=dict)
    llm_call_count: int = 0
    error: str | None = None
    last_agent_message: str | None = None
    times: list[int] = field(default_factory=list)


def _read_rollout(lines: list[tuple[int, dict[str, Any]]], warnings: list[str]) -> _Rollout:
    out = _Rollout()
    # A model call ends at its token_usage_record; rollouts without them have token_count events.
    per_call = any(line.get("type") == "token_usage_record" for _, line in lines)
    state = _RolloutState()
    for number, line in lines:
        with tolerate(number, warnings):
            _rollout_line(out, state, line, per_call)
    out.model = out.model or state.fallback_model
    out.usage = out.usage or state.last_total
    if out.duration_ms is None and out.times:  # no task_complete: the run was cut short
        out.duration_ms = max(out.times) - min(out.times)
    for entry in out.entries:
        _complete(entry, state.items, state.outputs)
    return out


@dataclass
class _RolloutState:
    """What the rollout says about calls after recording them, and fallbacks."""

    items: dict[str, tuple[dict[str, Any], int | None, int | None]] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    fallback_model: str | None = None
    last_total: TokenUsage | None = None


def _rollout_line(
    out: _Rollout, state: _RolloutState, line: dict[str, Any], per_call: bool
) -> None:
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return
    ms = iso_to_ms(line.get("timestamp"))
    if ms is not None:
        out.times.append(ms)
    turn = out.llm_call_count
    kind = line.get("type")
    if kind == "session_meta":
        out.session_id = _str(payload.get("id")) or _str(payload.get("session_id"))
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            out.entries.append(
                _Entry("inject", turn, ms, text, "codex:session_meta", "base_instructions")
            )
    elif kind == "turn_context":
        out.model = out.model or _str(payload.get("model"))
    elif kind == "token_usage_record":
        usage = codex_usage(payload.get("usage"))
        if usage is not None:
            out.turn_usage[turn] = usage
            out.usage = (out.usage or TokenUsage()) + usage
        out.llm_call_count += 1
    elif kind == "response_item":
        _response_item(out, payload, turn, ms, state.outputs)
    elif kind == "event_msg":
        event = payload.get("type")
        if event == "item_completed" and isinstance(payload.get("item"), dict):
            item = payload["item"]
            started, completed = payload.get("started_at_ms"), payload.get("completed_at_ms")
            state.items[str(item.get("id"))] = (item, _ms(started), _ms(completed))
        elif event == "task_complete":
            duration = payload.get("duration_ms")
            if isinstance(duration, int | float):
                out.duration_ms = (out.duration_ms or 0) + int(duration)
            out.last_agent_message = _str(payload.get("last_agent_message"))
        elif event == "token_count" and isinstance(payload.get("info"), dict):
            state.last_total = codex_usage(payload["info"].get("total_token_usage"))
            if not per_call:
                out.llm_call_count += 1
        elif event == "thread_settings_applied":
            settings = payload.get("thread_settings")
            if isinstance(settings, dict):
                state.fallback_model = state.fallback_model or _str(settings.get("model"))
        elif event == "error":
            out.error = _str(payload.get("message")) or "error"
            out.entries.append(_Entry("error", turn, ms, out.error))
        elif event == "stream_error":
            out.entries.append(_Entry("retry", turn, ms, _str(payload.get("message")) or ""))


def _response_item(
    out: _Rollout, payload: dict[str, Any], turn: int, ms: int | None, outputs: dict[str, Any]
) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        blocks = _list(payload.get("content"))
        texts = [
            b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        if role == "developer":
            for text in texts:
                out.entries.append(
                    _Entry("inject", turn, ms, text, "codex:developer", _label(text))
                )
        elif role == "user":
            harness = _from_harness(payload)
            said: list[str] = []
            for text in texts:
                label = _context_label(text)
                if label or harness:
                    label = label or _label(text)
                    out.entries.append(_Entry("inject", turn, ms, text, "codex:user", label))
                else:
                    said.append(text)
            if said:
                out.entries.append(_Entry("user", turn, ms, "\n".join(said)))
        elif role == "assistant":
            entry = _Entry("assistant", turn, ms, "\n".join(texts))
            entry.message_id = _str(payload.get("id"))
            out.entries.append(entry)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        native = _str(payload.get("name")) or str(kind)
        if kind == "function_call":
            raw: Any = payload.get("arguments")
            with contextlib.suppress(ValueError):  # a call with broken JSON keeps its string
                raw = json.loads(raw) if isinstance(raw, str) else raw
        elif kind == "custom_tool_call":
            raw = payload.get("input")
        else:
            raw = payload.get("action")
        family = _NATIVE_FAMILY.get(native, "mcp" if "__" in native else "other")
        entry = _Entry("call", turn, ms, native=native, family=family)
        entry.call_id = _str(payload.get("call_id")) or _str(payload.get("id"))
        entry.tool_input = _tool_input(native, raw)
        out.entries.append(entry)
    elif isinstance(kind, str) and kind.endswith("_output"):
        outputs[str(payload.get("call_id"))] = payload.get("output")


def _tool_input(native: str, raw: Any) -> Any:
    """The canonical input of a rollout tool call: shell calls as {"command": ...}, patches as
    {"changes": [...], "patch": ...}; other calls keep their arguments."""
    family = _NATIVE_FAMILY.get(native)
    if family == "command":
        if isinstance(raw, dict):
            rest = {k: v for k, v in raw.items() if k not in ("cmd", "command", "type")}
            return {"command": unwrap_shell(raw.get("cmd", raw.get("command"))), **rest}
        return {"command": unwrap_shell(raw)}
    if family == "patch":
        patch = raw.get("input", raw.get("patch")) if isinstance(raw, dict) else raw
        patch = patch if isinstance(patch, str) else None
        changes = [
            {"path": path.strip(), "kind": verb.lower()}
            for verb, path in _PATCH_FILE.findall(patch or "")
        ]
        return {"changes": changes, "patch": patch}
    return raw


def _complete(entry: _Entry, items: dict[str, Any], outputs: dict[str, Any]) -> None:
    """Fill a rollout entry from the item_completed event and tool output that follow it."""
    if entry.kind == "assistant" and entry.message_id in items:
        _, started, _completed = items[entry.message_id]
        entry.ms = started or entry.ms
    if entry.kind != "call":
        return
    output = outputs.get(entry.call_id or "")
    if isinstance(output, dict):  # some versions: {"output": ..., "metadata": {"exit_code"}}
        metadata = output.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
            entry.exit_code = metadata["exit_code"]
        output = output.get("output")
    if isinstance(output, list):
        output = content_text(output)
    if isinstance(output, str):
        entry.output = output
        match = _EXIT_CODE.search(output)
        if entry.exit_code is None and match:
            entry.exit_code = int(match.group(1))
    item, started, completed = items.get(entry.call_id or "", (None, None, None))
    if isinstance(item, dict):
        entry.ms, entry.end_ms = started or entry.ms, completed
        if isinstance(item.get("exit_code"), int):
            entry.exit_code = item["exit_code"]
        if isinstance(item.get("aggregated_output"), str):
            entry.output = item["aggregated_output"]
        elif isinstance(item.get("stdout"), str):
            stderr = item.get("stderr")
            entry.output = item["stdout"] + (stderr if isinstance(stderr, str) else "")
        if isinstance(item.get("changes"), dict) and isinstance(entry.tool_input, dict):
            entry.tool_input["changes"] = [
                {"path": path, "kind": change.get("type")}
                for path, change in item["changes"].items()
                if isinstance(change, dict)
            ]
        entry.status = _status(item.get("status"), entry.exit_code)
    elif entry.output is not None:
        entry.status = _status("completed", entry.exit_code)


def _emit_rollout(builder: SessionBuilder, rollout: _Rollout) -> EnrichedSession:
    for entry in rollout.entries:
        _emit_entry(builder, entry)
    session = builder.session
    session.session_id = rollout.session_id
    session.error = rollout.error
    for ms in rollout.times:
        builder.seen(ms)
    answer = rollout.last_agent_message
    if answer is None:
        answer = next((e.text for e in reversed(rollout.entries) if e.kind == "assistant"), "")
    _apply_rollout_facts(builder, rollout)
    return builder.finish(answer=answer)


def _apply_rollout_facts(builder: SessionBuilder, rollout: _Rollout) -> None:
    session = builder.session
    session.model = rollout.model
    session.duration_ms = rollout.duration_ms
    session.llm_call_count = rollout.llm_call_count
    session.token_usage = session.token_usage or rollout.usage
    for turn, usage in rollout.turn_usage.items():
        builder.turn_usage(turn, usage)


def _emit_entry(builder: SessionBuilder, entry: _Entry) -> None:
    if entry.kind == "call":
        _emit_call(builder, entry, entry.call_id, entry.turn)
    elif entry.kind == "inject":
        builder.system_prompt(
            entry.source, entry.label, entry.text, turn_index=entry.turn, timestamp_ms=entry.ms
        )
    elif entry.kind == "error":
        builder.error(entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)
    elif entry.kind == "retry":
        builder.retry(entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)
    else:
        builder.message(entry.kind, entry.text, turn_index=entry.turn, timestamp_ms=entry.ms)


def _emit_call(builder: SessionBuilder, entry: _Entry, call_id: str | None, turn: int) -> None:
    builder.tool_call(
        entry.native, entry.tool_input, call_id=call_id, turn_index=turn, timestamp_ms=entry.ms
    )
    _emit_result(builder, entry, call_id)


def _emit_result(builder: SessionBuilder, entry: _Entry, call_id: str | None) -> None:
    duration = None
    if entry.ms is not None and entry.end_ms is not None:
        duration = entry.end_ms - entry.ms
    builder.tool_result(
        call_id,
        output=entry.output,
        status=entry.status,
        exit_code=entry.exit_code,
        end_ms=entry.end_ms,
        duration_ms=duration,
    )


# --- exec --json stdout ----------------------------------------------------------------------


class _ExecParser:
    """Stdout items in order; with a rollout, each item is paired with the rollout's record of
    the same call (by order within its family) for its exact input, timing and model call."""

    def __init__(self, builder: SessionBuilder, rollout: _Rollout | None) -> None:
        self.b = builder
        self.rollout = rollout
        self.pending = list(rollout.entries) if rollout else []
        self.turn = 0  # model call index as stdout alone suggests it
        self.after_tool = False
        self.turn_used = False
        self.open: dict[str, EnrichedEvent] = {}  # item id -> tool call event
        self.usage: TokenUsage | None = None
        self.answer: str | None = None

    def parse(self, lines: list[tuple[int, dict[str, Any]]]) -> EnrichedSession:
        for number, line in lines:
            with tolerate(number, self.b.warnings):
                self._line(line)
        return self._finish()

    def _line(self, line: dict[str, Any]) -> None:
        session = self.b.session
        kind = line.get("type")
        if kind == "thread.started":
            session.session_id = _str(line.get("thread_id")) or session.session_id
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

    def _match(self, kind: str, family: Family | None = None) -> _Entry | None:
        """The rollout's record of this item; context injected before it is emitted first."""
        for index, entry in enumerate(self.pending):
            if entry.kind == kind and (family is None or entry.family == family):
                earlier = self.pending[:index]
                for context in earlier:
                    if context.kind in ("inject", "user"):
                        _emit_entry(self.b, context)
                # Records stdout skipped stay for later items: the two orders may differ.
                rest = [e for e in earlier if e.kind not in ("inject", "user")]
                self.pending[: index + 1] = rest
                return entry
        return None

    def _turn_of(self, entry: _Entry | None) -> int:
        """The item's model call: the rollout's when it has the item, else stdout's estimate."""
        if entry is None:
            return self._step()
        self.turn = max(self.turn, entry.turn)
        self.after_tool, self.turn_used = False, True
        return entry.turn

    def _item(self, item: dict[str, Any], *, completed: bool) -> None:
        item_type = item.get("type")
        item_id = _str(item.get("id")) or f"item-{len(self.b.session.events)}"
        if item_type == "agent_message":
            if completed and isinstance(item.get("text"), str):
                entry = self._match("assistant")
                turn = self._turn_of(entry)
                self.b.message("assistant", item["text"], turn_index=turn, timestamp_ms=_at(entry))
                self.answer = item["text"]
        elif item_type in _ITEM_FAMILY:
            self._tool_item(item_id, str(item_type), item, completed)
        elif item_type == "error" and completed:
            text = _str(item.get("message")) or "error"
            self.b.error(text, turn_index=self.turn, detail={"fatal": False})

    def _tool_item(self, item_id: str, item_type: str, item: dict[str, Any], done: bool) -> None:
        event = self.open.get(item_id)
        if event is None:
            entry = self._match("call", _ITEM_FAMILY[item_type])
            turn = self._turn_of(entry)
            if entry is not None:
                _emit_call(self.b, entry, entry.call_id or item_id, turn)
                event = self.b.session.events[-1]
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
        event.status = _status(item.get("status"), event.exit_code)

    def _fatal(self, line: dict[str, Any]) -> None:
        error = line.get("error")
        text = _str(error.get("message")) if isinstance(error, dict) else None
        text = text or _str(line.get("message")) or str(line.get("type"))
        # `error` then `turn.failed` usually say the same thing: one event for both.
        last = self.b.session.events[-1] if self.b.session.events else None
        if not (last and last.kind == "error" and last.text == text):
            self.b.error(text, turn_index=self.turn, detail={"type": line.get("type")})
        self.b.session.error = text

    def _finish(self) -> EnrichedSession:
        session = self.b.session
        for entry in self.pending:  # context of turns the stdout never reached
            if entry.kind in ("inject", "user"):
                _emit_entry(self.b, entry)
        session.token_usage = self.usage
        if self.rollout is not None:
            _apply_rollout_facts(self.b, self.rollout)
            for ms in self.rollout.times:
                self.b.seen(ms)
            session.session_id = session.session_id or self.rollout.session_id
        # Without a (complete) rollout the count is stdout's estimate, in which parallel tool
        # calls of one model call count as several.
        turns = {e.turn_index for e in session.events if e.role == "assistant"}
        session.llm_call_count = max(session.llm_call_count, len(turns))
        return self.b.finish(answer=self.answer)


def _item_input(item_type: str, item: dict[str, Any]) -> Any:
    if item_type == "command_execution":
        return {"command": unwrap_shell(item.get("command"))}
    if item_type == "file_change":
        return {
            "changes": [
                {"path": c.get("path"), "kind": c.get("kind")}
                for c in _list(item.get("changes"))
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


def _status(status: Any, exit_code: int | None) -> ToolStatus | None:
    if status == "failed" or (exit_code not in (None, 0)):
        return "error"
    if status == "declined":
        return "cancelled"
    if status == "completed":
        return "ok"
    return None


def _context_label(text: str) -> str | None:
    """The label of a user message codex wrote itself (environment, AGENTS.md), else None."""
    if text.lstrip().startswith("# AGENTS.md instructions"):
        return "AGENTS.md"
    match = _TAG.match(text)
    if match and match.group(1) in (
        "environment_context",
        "user_instructions",
        "user_shell_command",
    ):
        return match.group(1)
    return None


def _from_harness(payload: dict[str, Any]) -> bool:
    """Whether codex marks a user message as its own (provenance `harness`), not the user's."""
    meta = payload.get("internal_chat_message_metadata_passthrough")
    items = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    if not isinstance(items, list) or not items:
        return False
    return all(
        isinstance(i, dict)
        and isinstance(i.get("provenance"), dict)
        and i["provenance"].get("type") == "harness"
        for i in items
    )


def _label(text: str) -> str:
    match = _TAG.match(text)
    if match:
        return match.group(1)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:80]


def _at(entry: _Entry | None) -> int | None:
    return entry.ms if entry is not None else None


def _ms(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int:
    return _ms(value) or 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
