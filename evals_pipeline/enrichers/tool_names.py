"""Canonical tool names, so the same task gives the same tool sequence for every agent.

Each CLI names its tools its own way (claude `Write`, codex `apply_patch`, pi `write`); metrics
and trajectory graders compare `CANONICAL_TOOLS` names instead. The tables here are documented
in docs/events.md; keep the two in step.
"""

from __future__ import annotations

import re
from typing import Any

CLAUDE_TOOLS: dict[str, str] = {
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
"""Claude Code. `TaskOutput`/`TaskStop` manage background shells and agents, not the task list,
so they stay `Other` like `mcp__*` tools and the rest."""

CODEX_TOOLS: dict[str, str] = {
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
}
"""Codex CLI: tool names from the rollout and item types from `exec --json`."""

CODEX_PATCH_TOOLS = frozenset({"apply_patch", "file_change"})

PI_TOOLS: dict[str, str] = {
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "bash": "Bash",
    "grep": "Search",
    "find": "Search",
    "ls": "List",
}
"""pi."""

_TABLES: dict[str, dict[str, str]] = {
    "claude-code": CLAUDE_TOOLS,
    "codex": CODEX_TOOLS,
    "pi-agent": PI_TOOLS,
}

_PATCH_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File:", re.MULTILINE)


def canonical_tool(agent_kind: str, native_name: str, tool_input: Any = None) -> str:
    """The canonical name (one of `CANONICAL_TOOLS`) of a native tool; "Other" when unknown.

    `tool_input` only matters for codex patches: a patch that only adds files is a Write,
    one that updates or deletes a file is an Edit.
    """
    if agent_kind == "codex" and native_name in CODEX_PATCH_TOOLS:
        return _patch_tool(tool_input)
    table = _TABLES.get(agent_kind, {})
    return table.get(native_name) or table.get(native_name.lower()) or "Other"


def patch_kinds(tool_input: Any) -> list[str]:
    """The change kinds (`add`, `update`, `delete`) of a codex patch, from whatever form it has:
    a `file_change` item's `changes`, or the raw `apply_patch` envelope (alone or under
    "patch"/"input")."""
    if isinstance(tool_input, dict):
        changes = tool_input.get("changes")
        if isinstance(changes, list):
            kinds = [str(c.get("kind", "")) for c in changes if isinstance(c, dict)]
            if kinds:
                return kinds
        if isinstance(changes, dict):  # the rollout's FileChange: {path: {type, ...}}
            kinds = [str(c.get("type", "")) for c in changes.values() if isinstance(c, dict)]
            if kinds:
                return kinds
        tool_input = tool_input.get("patch", tool_input.get("input"))
    if isinstance(tool_input, str):
        return [header.lower() for header in _PATCH_HEADER.findall(tool_input)]
    return []


def _patch_tool(tool_input: Any) -> str:
    kinds = patch_kinds(tool_input)
    # A patch we cannot read is most likely an edit: adding files is the narrower claim.
    return "Write" if kinds and all(kind == "add" for kind in kinds) else "Edit"
