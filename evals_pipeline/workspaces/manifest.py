"""The state folder beside a workspace: what the pipeline must remember but the agent must not see.

It holds the manifest of the workspace's worktrees (so `remove_workspace(path)` can detach them
from their source repositories with nothing but the path) and the baseline's git folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MANIFEST_NAME = "manifest.json"


class WorktreeRecord(BaseModel):
    """A worktree placed in the workspace, and the git folder of the repository it belongs to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    worktree: str
    git_dir: str = Field(description="The source repository's common git folder, absolute.")


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    worktrees: list[WorktreeRecord] = Field(default_factory=list)


def state_dir(workspace: Path) -> Path:
    """The hidden sibling folder holding a workspace's state: `<parent>/.<name>.state`."""
    return workspace.parent / f".{workspace.name}.state"


def read_manifest(workspace: Path) -> Manifest:
    """The workspace's manifest; empty when none was written or it cannot be read."""
    path = state_dir(workspace) / MANIFEST_NAME
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return Manifest()


def record_worktree(workspace: Path, record: WorktreeRecord) -> None:
    """Add a worktree to the manifest, before it is created, so a crash still gets cleaned up."""
    manifest = read_manifest(workspace)
    if record not in manifest.worktrees:
        manifest.worktrees.append(record)
    folder = state_dir(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    # Written whole and renamed, so a reader never sees half a manifest.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".manifest-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(manifest.model_dump_json(indent=2))
    os.replace(tmp, folder / MANIFEST_NAME)
