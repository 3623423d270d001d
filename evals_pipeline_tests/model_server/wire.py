"""Request bodies shaped like the ones claude, codex and pi send (agent-clis.md 4.3, 5.3, 6.1-6.2)."""

from __future__ import annotations

import http.client
import json
from typing import Any

CWD = "/tmp/evals-case"

CLAUDE_TOOL_NAMES = [
    "Agent",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterWorktree",
    "ExitWorktree",
    "NotebookEdit",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
]
CLAUDE_TOOLS: list[dict[str, Any]] = [
    {"name": name, "description": f"The {name} tool", "input_schema": {"type": "object"}}
    for name in CLAUDE_TOOL_NAMES
]
CLAUDE_SYSTEM: list[dict[str, Any]] = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {
        "type": "text",
        "text": f"# Environment\n - Primary working directory: {CWD}\n - Is a git repository: true\n",
    },
]

CODEX_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
    {"type": "function", "name": "write_stdin", "parameters": {"type": "object"}},
    {"type": "function", "name": "request_user_input", "parameters": {"type": "object"}},
    {
        "type": "custom",
        "name": "apply_patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"},
    },
    {"type": "function", "name": "view_image", "parameters": {"type": "object"}},
    {"type": "tool_search"},
    {"type": "web_search", "external_web_access": False},
]
CODEX_PREAMBLE: list[dict[str, Any]] = [
    {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "<permissions instructions>…"}],
    },
    {
        "type": "message",
        "role": "user",
        "content": [
            {
                "type": "input_text",
                "text": f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <shell>bash</shell>\n</environment_context>",
            }
        ],
    },
]

PI_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": name, "description": name, "parameters": {}}}
    for name in ("read", "bash", "edit", "write")
]
PI_SYSTEM: dict[str, Any] = {
    "role": "system",
    "content": f"You are an expert coding assistant.\nCurrent working directory: {CWD}",
}


def claude_body(messages: list[dict[str, Any]], *, stream: bool = True) -> dict[str, Any]:
    """A claude `POST /v1/messages` body around the given history."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "system": CLAUDE_SYSTEM,
        "tools": CLAUDE_TOOLS,
        "messages": messages,
        "thinking": {"type": "enabled", "budget_tokens": 31999},
        "metadata": {"user_id": json.dumps({"session_id": "s"})},
        "stream": stream,
    }


def codex_body(items: list[dict[str, Any]], *, stream: bool = True) -> dict[str, Any]:
    """A codex `POST /v1/responses` body: preamble items, then the given items."""
    return {
        "model": "gpt-5.5",
        "input": [*CODEX_PREAMBLE, *items],
        "tools": CODEX_TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "medium"},
        "store": False,
        "stream": stream,
    }


def pi_body(messages: list[dict[str, Any]], *, stream: bool = True) -> dict[str, Any]:
    """A pi `POST /v1/chat/completions` body: system message, then the given history."""
    return {
        "model": "local-model",
        "messages": [PI_SYSTEM, *messages],
        "tools": PI_TOOLS,
        "stream": stream,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 4096,
        "store": False,
    }


def post(
    port: int,
    path: str,
    body: bytes | dict[str, Any],
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP POST: status, lower-cased headers and the (de-chunked) body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        connection.request("POST", path, body=payload, headers=all_headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def sse_events(raw: bytes) -> list[tuple[str | None, Any]]:
    """Parse an SSE body into (event name, data) pairs; `[DONE]` stays a string."""
    events: list[tuple[str | None, Any]] = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                text = line[len("data: ") :]
                data = text if text == "[DONE]" else json.loads(text)
        events.append((name, data))
    return events
