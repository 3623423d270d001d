"""Isolated workspaces for agent runs: template copies, git worktrees, hooks, baseline diffs.

Pure Python, no Dagster. An adapter calls, per run: `prepare_workspace` → agent →
`file_changes` → `finish_workspace` → `remove_workspace` (or `WorkspaceRemovals`, off the
case's path) when `should_remove` says so.
"""

from evals_pipeline.workspaces.hooks import HookContext, HookResult
from evals_pipeline.workspaces.lifecycle import (
    PreparedWorkspace,
    WorkspaceRemovals,
    WorkspaceSetupError,
    file_changes,
    finish_workspace,
    prepare_workspace,
    remove_workspace,
    should_remove,
)
from evals_pipeline.workspaces.template import create_workspace

__all__ = [
    "HookContext",
    "HookResult",
    "PreparedWorkspace",
    "WorkspaceRemovals",
    "WorkspaceSetupError",
    "create_workspace",
    "file_changes",
    "finish_workspace",
    "prepare_workspace",
    "remove_workspace",
    "should_remove",
]
