"""Canonical tool names, so the same task gives the same tool sequence for every agent.

Each CLI names its tools its own way (claude `Write`, codex `apply_patch`, pi `write`); metrics
and trajectory graders compare `CANONICAL_TOOLS` names instead. Each agent's table sits beside
its stream parser and is registered with the agent (evals_pipeline/agents/); the tables are
documented in docs/events.md, keep the two in step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolNames:
    """One agent's native tool names and their canonical names; `patch_tools` are patches
    (codex's `apply_patch`) whose canonical name depends on what they change."""

    names: Mapping[str, str]
    patch_tools: frozenset[str] = field(default_factory=frozenset)

    def native(self) -> list[str]:
        """Every native name this table knows."""
        return [*self.names, *sorted(self.patch_tools)]


NO_TOOLS = ToolNames({})
"""An agent whose stream names no tools: every call is `Other`."""

_PATCH_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File:", re.MULTILINE)


def canonical_tool(tools: ToolNames, native_name: str, tool_input: Any = None) -> str:
    """The canonical name (one of `CANONICAL_TOOLS`) of a native tool; "Other" when unknown.

    `tool_input` only matters for patches: a patch that only adds files is a Write, one that
    updates or deletes a file is an Edit.
    """
    if native_name in tools.patch_tools:
        return _patch_tool(tool_input)
    table = tools.names
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
