"""Claude Code's JSONL into the canonical event model.

Reads both `claude -p --output-format stream-json --verbose` and the on-disk transcript
`~/.claude/projects/<slug>/<session>.jsonl`: the same `user`/`assistant` lines, but the
transcript has a timestamp on every line and no `result` line. Reference: agent-clis.md sec 4.
"""

from __future__ import annotations

import re
from typing import Any

from evals_pipeline.enrichers.builder import ParsedStream, SessionBuilder, as_text, tolerate
from evals_pipeline.enrichers.cli_output import iso_to_ms
from evals_pipeline.enrichers.jsonl import Source, iter_jsonl
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import TokenUsage

AGENT_KIND = "claude-code"

TOOL_NAMES = ToolNames(
    {
        "Read": "Read",
        "NotebookRead": "Read",
        "Write": "Write",
        "Edit": "Edit",
        "MultiEdit": "Edit",
        "NotebookEdit": "Edit",
        "Bash": "Bash",
        "BashOutput": "Bash",
        "Grep": "Search",
        # Glob matches file names against a pattern anywhere in the tree: a search, not a listing.
        "Glob": "Search",
        "LS": "List",
        "WebFetch": "Fetch",
        "WebSearch": "WebSearch",
        "Task": "Task",
        "Agent": "Task",
        "TodoWrite": "Todo",
        "TodoRead": "Todo",
        "TaskCreate": "Todo",
        "TaskGet": "Todo",
        "TaskList": "Todo",
        "TaskUpdate": "Todo",
        "Skill": "Skill",
        "SlashCommand": "Skill",
    }
)
"""Claude Code. `TaskOutput`/`TaskStop` manage background shells and agents, not the task list,
so they stay `Other` like `mcp__*` tools and the rest."""

SYNTHETIC_MODEL = "<synthetic>"
"""The model name Claude Code gives the assistant line it writes itself on an API error."""

_REMINDER = re.compile(r"<system-reminder>(.*?)</system-reminder>", re.DOTALL)
_EXIT_CODE = re.compile(r"^Exit code (\d+)")


def parse_claude(text: str) -> EnrichedSession:
    """Parse a Claude Code stream-json output or on-disk transcript; never raises on bad input."""
    return claude_stream(text).enriched()


def claude_stream(source: Source, _session_file: Source | None = None) -> ParsedStream:
    """`parse_claude` of a text or an open file, read line by line, left unmodelled."""
    return _ClaudeParser().parse(source)


def claude_usage(usage: Any) -> TokenUsage | None:
    """Anthropic usage in the AgentV convention: cache writes are input, cache reads `cached`."""
    if not isinstance(usage, dict):
        return None
    return TokenUsage(
        input=_int(usage.get("input_tokens")) + _int(usage.get("cache_creation_input_tokens")),
        output=_int(usage.get("output_tokens")),
        cached=_int(usage.get("cache_read_input_tokens")),
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class _ClaudeParser:
    def __init__(self) -> None:
        self.b = SessionBuilder(AGENT_KIND, TOOL_NAMES)
        self.turns: dict[str, int] = {}  # message id -> model call index
        self.usage: dict[str, Any] = {}  # message id -> usage of its last line
        self.last_ms: int | None = None
        self.timed_calls: dict[str, int] = {}  # call id -> start, when the line had a timestamp
        self.result: dict[str, Any] | None = None
        self.on_disk = False
        self.api_error: str | None = None

    def parse(self, source: Source) -> ParsedStream:
        for number, line in iter_jsonl(source, self.b.warnings):
            with tolerate(number, self.b.warnings):
                self._line(line)
        return self._finish()

    def _line(self, line: dict[str, Any]) -> None:
        session = self.b.session
        line_ms = iso_to_ms(line.get("timestamp"))
        if line_ms is not None:
            self.b.seen(line_ms)
            self.last_ms = line_ms
        self.on_disk = self.on_disk or "parentUuid" in line or "sessionId" in line
        session.session_id = session.session_id or _str(
            line.get("session_id") or line.get("sessionId")
        )
        # A sub-agent's own lines: its work is the Task call of the main agent.
        if line.get("parent_tool_use_id") or line.get("isSidechain"):
            return
        kind = line.get("type")
        if kind == "system":
            self._system(line)
        elif kind == "assistant":
            self._assistant(line, line_ms)
        elif kind == "user":
            self._user(line)
        elif kind == "result":
            self.result = line
        # Everything else (stream_event, summary, file-history-snapshot, ...) carries no
        # event of the canonical model.

    def _system(self, line: dict[str, Any]) -> None:
        subtype = line.get("subtype")
        if subtype == "init":
            self.b.session.model = _str(line.get("model")) or self.b.session.model
        elif subtype == "api_retry":
            detail = {
                key: line.get(key)
                for key in ("attempt", "max_retries", "retry_delay_ms", "error_status", "error")
            }
            self.b.retry(
                _str(line.get("error")) or "api_retry",
                turn_index=len(self.turns),
                timestamp_ms=self.last_ms,
                detail=detail,
            )

    def _assistant(self, line: dict[str, Any], line_ms: int | None) -> None:
        message = line.get("message")
        if not isinstance(message, dict):
            return
        model = _str(message.get("model"))
        content = message.get("content")
        if model == SYNTHETIC_MODEL or line.get("isApiErrorMessage"):
            self.api_error = as_text(content) or "API error"
            self.b.error(
                self.api_error,
                turn_index=len(self.turns),
                timestamp_ms=self.last_ms,
                detail={"error": line.get("error"), "api_error_status": line.get("apiErrorStatus")},
            )
            return
        # One line per content block: the message id ties the blocks of one model call together.
        message_id = _str(message.get("id")) or _str(line.get("uuid")) or f"line-{len(self.turns)}"
        turn = self.turns.setdefault(message_id, len(self.turns))
        if "usage" in message:
            self.usage[message_id] = message["usage"]
        if model and not self.b.session.model:
            self.b.session.model = model
        for block in _blocks(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.b.message(
                    "assistant",
                    block["text"],
                    turn_index=turn,
                    timestamp_ms=self.last_ms,
                    model=model,
                )
            elif block.get("type") == "tool_use":
                call_id = _str(block.get("id"))
                self.b.tool_call(
                    _str(block.get("name")) or "",
                    block.get("input"),
                    call_id=call_id,
                    turn_index=turn,
                    timestamp_ms=self.last_ms,
                    model=model,
                )
                if call_id and line_ms is not None:
                    self.timed_calls[call_id] = line_ms

    def _user(self, line: dict[str, Any]) -> None:
        message = line.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        texts: list[str] = []
        for block in _blocks(content):
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                self._tool_result(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
        text = self._reminders("\n".join(t for t in texts if t)).strip()
        if line.get("isMeta"):
            self._inject("claude:meta", text)
        else:
            self.b.message("user", text, turn_index=len(self.turns), timestamp_ms=self.last_ms)

    def _tool_result(self, block: dict[str, Any]) -> None:
        call_id = _str(block.get("tool_use_id"))
        output = as_text(block.get("content"))
        self._reminders(output)
        failed = block.get("is_error") is True  # a successful Write has no is_error at all
        match = _EXIT_CODE.match(output) if failed else None
        start = self.timed_calls.get(call_id or "")
        self.b.tool_result(
            call_id,
            output=output,
            status="error" if failed else "ok",
            exit_code=int(match.group(1)) if match else None,
            end_ms=self.last_ms,
            duration_ms=self.last_ms - start
            if start is not None and self.last_ms is not None
            else None,
        )

    def _reminders(self, text: str) -> str:
        """Record each `<system-reminder>` block as an injection; the text without them."""
        for match in _REMINDER.finditer(text):
            self._inject("claude:system-reminder", match.group(1).strip())
        return _REMINDER.sub("", text)

    def _inject(self, source: str, text: str) -> None:
        label = next((line.strip() for line in text.splitlines() if line.strip()), "")
        self.b.system_prompt(
            source,
            label[:80],
            text,
            turn_index=len(self.turns),
            timestamp_ms=self.last_ms,
        )

    def _finish(self) -> ParsedStream:
        session = self.b.session
        result = self.result or {}
        session.llm_call_count = len(self.turns)
        answer: str | None = None
        if self.result is None:
            # No result line (a transcript, or a cut stream): the per-line usage is all there is,
            # one count per model call, from the call's last line.
            for message_id, usage in self.usage.items():
                turn_usage = claude_usage(usage)
                if turn_usage is not None:
                    self.b.turn_usage(self.turns[message_id], turn_usage)
                    session.token_usage = (session.token_usage or TokenUsage()) + turn_usage
            session.error = self.api_error
        else:
            session.token_usage = claude_usage(result.get("usage"))
            cost = result.get("total_cost_usd")
            session.cost_usd = float(cost) if isinstance(cost, int | float) else None
            duration = result.get("duration_ms")
            session.duration_ms = int(duration) if isinstance(duration, int | float) else None
            if not session.model and isinstance(result.get("modelUsage"), dict):
                session.model = next(iter(result["modelUsage"]), None)
            # Classify by is_error, never by subtype: an API error still says "success".
            if result.get("is_error"):
                session.error = _str(result.get("result")) or _str(result.get("subtype")) or "error"
                if self.api_error is None:
                    self.b.error(
                        session.error,
                        turn_index=len(self.turns),
                        timestamp_ms=self.last_ms,
                        detail={
                            "subtype": result.get("subtype"),
                            "api_error_status": result.get("api_error_status"),
                        },
                    )
            elif isinstance(result.get("result"), str):
                answer = result["result"]
        parsed = self.b.finish(answer=answer)
        if session.duration_ms is None and self.on_disk and session.start_ms is not None:
            session.duration_ms = (session.end_ms or session.start_ms) - session.start_ms
        return parsed


def _blocks(content: Any) -> list[Any]:
    """Message content as a block list: a plain string is one text block."""
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if isinstance(content, str) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
