"""Codex's rollout file (`$CODEX_HOME/sessions/.../rollout-*.jsonl`) into the canonical event
model: `{timestamp, type, payload}` lines with the model, timing, exact tool calls and injected
context that `exec --json` lacks. Alone it is a complete session (for importing past runs).
Reference: agent-clis.md sec 5.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from evals_pipeline.enrichers.builder import SessionBuilder, tolerate
from evals_pipeline.enrichers.cli_output import iso_to_ms
from evals_pipeline.enrichers.codex.fields import (
    AGENT_KIND,
    NATIVE_FAMILY,
    TOOL_NAMES,
    as_list,
    as_ms,
    as_str,
    codex_usage,
    tool_status,
    unwrap_shell,
)
from evals_pipeline.enrichers.codex.records import Entry, Rollout, emit_rollout
from evals_pipeline.enrichers.jsonl import iter_jsonl
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import TokenUsage, content_text

ROLLOUT_LINE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "token_usage_record"}
)
_TAG = re.compile(r"^\s*<([\w -]+)>")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT_CODE = re.compile(r"(?:Exit code:|Process exited with code) (-?\d+)")


def parse_codex_rollout(text: str) -> EnrichedSession:
    """Parse a codex rollout file alone (an existing session, without its stdout)."""
    builder = SessionBuilder(AGENT_KIND, TOOL_NAMES)
    lines = list(iter_jsonl(text, builder.warnings))
    return emit_rollout(builder, read_rollout(lines, builder.warnings)).enriched()


def is_rollout(lines: list[dict[str, Any]]) -> bool:
    """Whether parsed lines are a rollout file (`{timestamp, type, payload}`) not exec output."""
    return any(
        as_str(line.get("type")) in ROLLOUT_LINE_TYPES and "payload" in line for line in lines[:5]
    )


def read_rollout(lines: list[tuple[int, dict[str, Any]]], warnings: list[str]) -> Rollout:
    out = Rollout()
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


def _rollout_line(out: Rollout, state: _RolloutState, line: dict[str, Any], per_call: bool) -> None:
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return
    ms = iso_to_ms(line.get("timestamp"))
    if ms is not None:
        out.times.append(ms)
    turn = out.llm_call_count
    kind = line.get("type")
    if kind == "session_meta":
        out.session_id = as_str(payload.get("id")) or as_str(payload.get("session_id"))
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            out.entries.append(
                Entry("inject", turn, ms, text, "codex:session_meta", "base_instructions")
            )
    elif kind == "turn_context":
        out.model = out.model or as_str(payload.get("model"))
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
            state.items[str(item.get("id"))] = (item, as_ms(started), as_ms(completed))
        elif event == "task_complete":
            duration = payload.get("duration_ms")
            if isinstance(duration, int | float):
                out.duration_ms = (out.duration_ms or 0) + int(duration)
            out.last_agent_message = as_str(payload.get("last_agent_message"))
        elif event == "token_count" and isinstance(payload.get("info"), dict):
            state.last_total = codex_usage(payload["info"].get("total_token_usage"))
            if not per_call:
                out.llm_call_count += 1
        elif event == "thread_settings_applied":
            settings = payload.get("thread_settings")
            if isinstance(settings, dict):
                state.fallback_model = state.fallback_model or as_str(settings.get("model"))
        elif event == "error":
            out.error = as_str(payload.get("message")) or "error"
            out.entries.append(Entry("error", turn, ms, out.error))
        elif event == "stream_error":
            out.entries.append(Entry("retry", turn, ms, as_str(payload.get("message")) or ""))


def _response_item(
    out: Rollout, payload: dict[str, Any], turn: int, ms: int | None, outputs: dict[str, Any]
) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        blocks = as_list(payload.get("content"))
        texts = [
            b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        if role == "developer":
            for text in texts:
                out.entries.append(Entry("inject", turn, ms, text, "codex:developer", _label(text)))
        elif role == "user":
            harness = _from_harness(payload)
            said: list[str] = []
            for text in texts:
                label = _context_label(text)
                if label or harness:
                    label = label or _label(text)
                    out.entries.append(Entry("inject", turn, ms, text, "codex:user", label))
                else:
                    said.append(text)
            if said:
                out.entries.append(Entry("user", turn, ms, "\n".join(said)))
        elif role == "assistant":
            entry = Entry("assistant", turn, ms, "\n".join(texts))
            entry.message_id = as_str(payload.get("id"))
            out.entries.append(entry)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        native = as_str(payload.get("name")) or str(kind)
        if kind == "function_call":
            raw: Any = payload.get("arguments")
            with contextlib.suppress(ValueError):  # a call with broken JSON keeps its string
                raw = json.loads(raw) if isinstance(raw, str) else raw
        elif kind == "custom_tool_call":
            raw = payload.get("input")
        else:
            raw = payload.get("action")
        family = NATIVE_FAMILY.get(native, "mcp" if "__" in native else "other")
        entry = Entry("call", turn, ms, native=native, family=family)
        entry.call_id = as_str(payload.get("call_id")) or as_str(payload.get("id"))
        entry.tool_input = _tool_input(native, raw)
        out.entries.append(entry)
    elif isinstance(kind, str) and kind.endswith("_output"):
        outputs[str(payload.get("call_id"))] = payload.get("output")


def _tool_input(native: str, raw: Any) -> Any:
    """The canonical input of a rollout tool call: shell calls as {"command": ...}, patches as
    {"changes": [...], "patch": ...}; other calls keep their arguments."""
    family = NATIVE_FAMILY.get(native)
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


def _complete(entry: Entry, items: dict[str, Any], outputs: dict[str, Any]) -> None:
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
        entry.status = tool_status(item.get("status"), entry.exit_code)
    elif entry.output is not None:
        entry.status = tool_status("completed", entry.exit_code)


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
