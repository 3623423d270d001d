"""pi's JSONL into the canonical event model.

Reads both `pi --mode json` stdout and pi's own session file (a tree of `session`,
`model_change`, `message`, ... entries linked by `id`/`parentId`). pi exits 0 on model errors:
the error is only in the last assistant message. Reference: agent-clis.md sec 6.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evals_pipeline.enrichers.builder import ParsedStream, SessionBuilder, as_text, tolerate
from evals_pipeline.enrichers.cli_output import iso_to_ms
from evals_pipeline.enrichers.jsonl import Source, iter_jsonl
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import TokenUsage

AGENT_KIND = "pi-agent"

TOOL_NAMES = ToolNames(
    {
        "read": "Read",
        "write": "Write",
        "edit": "Edit",
        "bash": "Bash",
        "grep": "Search",
        "find": "Search",
        "ls": "List",
    }
)
"""pi: its tools as `--mode json` and its session file name them."""

FAILED_STOP_REASONS = frozenset({"error", "aborted"})

_EXIT_CODE = re.compile(r"Command exited with code (\d+)")
_SUMMARY_ROLES = {"compactionSummary": "compaction", "branchSummary": "branch"}


def parse_pi(text: str) -> EnrichedSession:
    """Parse pi's `--mode json` stdout or its session file; never raises on bad input."""
    return pi_stream(text).enriched()


def pi_stream(source: Source, _session_file: Source | None = None) -> ParsedStream:
    """`parse_pi` of a text or an open file, read line by line, left unmodelled."""
    return _PiParser().parse(source)


_EVENT_LINES = frozenset(
    {
        "session",
        "message",
        "message_end",
        "model_change",
        "tool_execution_end",
        "auto_retry_start",
        "auto_retry_end",
    }
)
"""The line types `_PiParser._line` makes something of; of the others (message_update, the
bulk of a long stdout, repeats its message's text so far) it reads the time alone."""
_HELD_KEYS = ("type", "timestamp", "id", "parentId")
"""What is read of any line: its type and time, and its place in a session file's tree."""


def _held(line: dict[str, Any]) -> dict[str, Any]:
    """`line` as the parser reads it: whole when it makes an event, else its held keys."""
    kind = line.get("type")
    if isinstance(kind, str) and kind in _EVENT_LINES:
        return line
    return {key: line[key] for key in _HELD_KEYS if key in line}


def pi_usage(usage: Any) -> TokenUsage | None:
    """pi usage in the AgentV convention: cache writes are input, cache reads `cached`."""
    if not isinstance(usage, dict):
        return None
    return TokenUsage(
        input=_int(usage.get("input")) + _int(usage.get("cacheWrite")),
        output=_int(usage.get("output")),
        cached=_int(usage.get("cacheRead")),
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class _PiParser:
    def __init__(self) -> None:
        self.b = SessionBuilder(AGENT_KIND, TOOL_NAMES)
        self.calls = 0  # model calls answered so far: the next call's turn index
        self.seen_messages: set[str] = set()
        self.message_ms: list[int] = []
        self.last_assistant: dict[str, Any] | None = None
        self.answer: str | None = None
        self.cost: float | None = None
        self.fallback_model: str | None = None

    def parse(self, source: Source) -> ParsedStream:
        # A session file's branches are known at its end: its lines are held, parsed (the text
        # itself is not), each line no event comes from as only what is read of it.
        lines = [(number, _held(line)) for number, line in iter_jsonl(source, self.b.warnings)]
        if any(line.get("type") == "message" for _, line in lines):
            lines = self._active_branch(lines)
        for number, line in lines:
            with tolerate(number, self.b.warnings):
                self._line(line)
        return self._finish()

    def _active_branch(
        self, entries: list[tuple[int, dict[str, Any]]]
    ) -> list[tuple[int, dict[str, Any]]]:
        """A session file's entries on the path from the root to the last entry: branches left
        behind by `/tree` are not part of the conversation the model saw last."""
        # The `session` header has an id too, but no parentId: it is not part of the tree.
        tree = [(n, e) for n, e in entries if "parentId" in e and isinstance(e.get("id"), str)]
        if not tree:
            return entries
        by_id = {e["id"]: (n, e) for n, e in tree}
        path: list[tuple[int, dict[str, Any]]] = []
        entry: tuple[int, dict[str, Any]] | None = tree[-1]
        while entry is not None and len(path) <= len(by_id):
            path.append(entry)
            parent = entry[1].get("parentId")
            if parent is None:
                return [(n, e) for n, e in entries if "parentId" not in e] + path[::-1]
            entry = by_id.get(parent) if isinstance(parent, str) else None
        self.b.warnings.append("session tree is broken or cyclic: entries read in file order")
        return entries

    def _line(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        line_ms = iso_to_ms(line.get("timestamp"))
        self.b.seen(line_ms)
        if kind == "session":
            self.b.session.session_id = _str(line.get("id")) or self.b.session.session_id
        elif kind in ("message_end", "message") and isinstance(line.get("message"), dict):
            self._message(line["message"], line_ms)
        elif kind == "model_change":
            self.fallback_model = _str(line.get("modelId")) or self.fallback_model
        elif kind == "tool_execution_end":
            result = line.get("result")
            failed = line.get("isError") is True
            output = as_text(result.get("content")) if isinstance(result, dict) else None
            self._tool_result(line.get("toolCallId"), output, failed, None)
        elif kind == "auto_retry_start":
            self.b.retry(
                _str(line.get("errorMessage")),
                turn_index=self.calls,
                timestamp_ms=self._now(),
                detail={k: line.get(k) for k in ("attempt", "maxAttempts", "delayMs")},
            )
        elif kind == "auto_retry_end":
            # The end of a retry sequence is not one more attempt.
            self.b.retry(
                _str(line.get("finalError")),
                turn_index=self.calls,
                timestamp_ms=self._now(),
                detail={"attempt": line.get("attempt"), "success": line.get("success")},
                counts=False,
            )
        # message_start is a placeholder; message_update, turn_end and agent_end repeat what
        # message_end says; the rest (queue_update, compaction_*) has no canonical event.

    def _message(self, message: dict[str, Any], line_ms: int | None) -> None:
        key = json.dumps(message, sort_keys=True, default=str)
        if key in self.seen_messages:
            return
        self.seen_messages.add(key)
        role = message.get("role")
        ms = message.get("timestamp")
        ms = int(ms) if isinstance(ms, int | float) and not isinstance(ms, bool) else line_ms
        if ms is not None:
            self.b.seen(ms)
            self.message_ms.append(ms)
        if role == "user":
            text = as_text(_content(message))
            self.b.message("user", text, turn_index=self.calls, timestamp_ms=ms)
        elif role == "assistant":
            self._assistant(message, ms)
        elif role == "toolResult":
            failed = message.get("isError") is True
            output = as_text(_content(message))
            self._tool_result(message.get("toolCallId"), output, failed, ms)
        elif role == "custom":
            label = _str(message.get("customType")) or "custom"
            text = as_text(_content(message))
            self.b.system_prompt("pi:custom", label, text, turn_index=self.calls, timestamp_ms=ms)
        elif role in _SUMMARY_ROLES:
            text = _str(message.get("summary")) or ""
            label = _SUMMARY_ROLES[role]
            self.b.system_prompt("pi:summary", label, text, turn_index=self.calls, timestamp_ms=ms)

    def _assistant(self, message: dict[str, Any], ms: int | None) -> None:
        turn = self.calls
        model = _str(message.get("model"))
        stop = message.get("stopReason")
        self.b.session.model = self.b.session.model or model
        usage = pi_usage(message.get("usage"))
        if usage is not None:
            self.b.turn_usage(turn, usage)
            self.b.session.token_usage = (self.b.session.token_usage or TokenUsage()) + usage
            cost = message["usage"].get("cost")
            total = cost.get("total") if isinstance(cost, dict) else None
            if isinstance(total, int | float):
                self.cost = (self.cost or 0.0) + total
        texts: list[str] = []
        for block in _content(message):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                self.b.message(
                    "assistant", block["text"], turn_index=turn, timestamp_ms=ms, model=model
                )
            elif block.get("type") == "toolCall":
                self.b.tool_call(
                    _str(block.get("name")) or "",
                    block.get("arguments"),
                    call_id=_str(block.get("id")),
                    turn_index=turn,
                    timestamp_ms=ms,
                    model=model,
                )
        if stop in FAILED_STOP_REASONS:
            error = _str(message.get("errorMessage")) or f"stopReason: {stop}"
            self.b.error(error, turn_index=turn, timestamp_ms=ms, detail={"stop_reason": stop})
        if stop == "stop":
            self.answer = "\n".join(texts)
        # A call that failed outright is retried under the same turn index.
        if stop != "error":
            self.calls += 1
        self.last_assistant = message

    def _tool_result(self, call_id: Any, output: str | None, failed: bool, ms: int | None) -> None:
        match = _EXIT_CODE.search(output or "") if failed else None
        self.b.tool_result(
            _str(call_id),
            output=output,
            status="error" if failed else "ok",
            exit_code=int(match.group(1)) if match else None,
            end_ms=ms,
        )

    def _now(self) -> int | None:
        return self.message_ms[-1] if self.message_ms else None

    def _finish(self) -> ParsedStream:
        session = self.b.session
        session.model = session.model or self.fallback_model
        session.llm_call_count = self.calls
        session.cost_usd = self.cost
        if self.message_ms:
            session.duration_ms = max(self.message_ms) - min(self.message_ms)
        last = self.last_assistant or {}
        if last.get("stopReason") in FAILED_STOP_REASONS:
            session.error = _str(last.get("errorMessage")) or f"stopReason: {last['stopReason']}"
        return self.b.finish(answer=self.answer)


def _content(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
