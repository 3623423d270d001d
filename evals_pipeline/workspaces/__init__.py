"""Isolated workspaces for agent runs: template copies, git worktrees, hooks, baseline diffs.

Pure Python, no Dagster. An adapter calls, per run: `prepare_workspace` → agent →
`file_changes` → `finish_workspace` → `remove_workspace` (or `WorkspaceRemovals`, off the
case's path) when `should_remove` says so.
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
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

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "HookContext": "hooks",
    "HookResult": "hooks",
    "PreparedWorkspace": "lifecycle",
    "WorkspaceRemovals": "lifecycle",
    "WorkspaceSetupError": "lifecycle",
    "create_workspace": "template",
    "file_changes": "lifecycle",
    "finish_workspace": "lifecycle",
    "prepare_workspace": "lifecycle",
    "remove_workspace": "lifecycle",
    "should_remove": "lifecycle",
}

__getattr__ = lazy_exports(__name__, _MODULES)

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
