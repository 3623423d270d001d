"""Codex fields read the same way in `exec --json` stdout and the rollout file: token usage,
shell commands, tool-call families and statuses, and typed values."""

from __future__ import annotations

import posixpath
import shlex
from typing import Any, Literal

from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.messages import TokenUsage, ToolStatus

AGENT_KIND = "codex"

TOOL_NAMES = ToolNames(
    {
        # apply_patch / file_change are Write or Edit depending on the patch: see `_patch_tool`.
        "exec_command": "Bash",
        "write_stdin": "Bash",
        "shell": "Bash",
        "shell_command": "Bash",
        "local_shell": "Bash",
        "local_shell_call": "Bash",
        "command_execution": "Bash",
        "web_search": "WebSearch",
        "web_search_call": "WebSearch",
        "view_image": "Read",
        "update_plan": "Todo",
        "todo_list": "Todo",
        "spawn_agent": "Task",
        "mcp_tool_call": "Other",
    },
    patch_tools=frozenset({"apply_patch", "file_change"}),
)
"""Codex CLI: tool names from the rollout and item types from `exec --json`."""


# Which rollout tool calls an `exec --json` item stands for, to pair the two by order.
Family = Literal["command", "patch", "web_search", "plan", "mcp", "other"]
ITEM_FAMILY: dict[str, Family] = {
    "command_execution": "command",
    "file_change": "patch",
    "web_search": "web_search",
    "todo_list": "plan",
    "mcp_tool_call": "mcp",
}
NATIVE_FAMILY: dict[str, Family] = {
    "exec_command": "command",
    "shell": "command",
    "shell_command": "command",
    "local_shell_call": "command",
    "apply_patch": "patch",
    "web_search_call": "web_search",
    "update_plan": "plan",
}
_SHELLS = frozenset({"bash", "sh", "zsh"})


def codex_usage(usage: Any) -> TokenUsage | None:
    """OpenAI usage in the AgentV convention: `input` excludes the cached part; output includes
    reasoning tokens (codex counts them in output_tokens already)."""
    if not isinstance(usage, dict):
        return None
    cached = as_int(usage.get("cached_input_tokens"))
    return TokenUsage(
        input=max(as_int(usage.get("input_tokens")) - cached, 0),
        output=as_int(usage.get("output_tokens")),
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


def tool_status(status: Any, exit_code: int | None) -> ToolStatus | None:
    """A tool call's canonical status from codex's item status and exit code."""
    if status == "failed" or (exit_code not in (None, 0)):
        return "error"
    if status == "declined":
        return "cancelled"
    if status == "completed":
        return "ok"
    return None


def as_ms(value: Any) -> int | None:
    """A number as an int (epoch or duration ms), else None."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def as_int(value: Any) -> int:
    """A number as an int, else 0."""
    return as_ms(value) or 0


def as_list(value: Any) -> list[Any]:
    """A list, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None
