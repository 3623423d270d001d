"""A run's workspace as it was graded, kept as a compressed tar when clean-up deletes it, so a
later re-grade whose graders read the workspace (a code grader, say) restores it instead of
running the agent again.

Every file, folder and symlink is kept as it lies (symlinks as symlinks, never followed), except
the `.git` pointer files: the workspace's into its baseline repository (in the state folder,
deleted with it) and each worktree's into its repository. A grader's `git diff` there has no
baseline after a restore; the diff is in the payload (`file_changes`). The archive is a stored
file like a transcript: each file's secrets are scrubbed (secrets.py), where a workspace left on
disk is not (it is the agent's work, graded as it lies), and it is private (file_modes.py). A state larger than EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB is not
kept: its note says so, and a re-grade needing it runs the agent again.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.file_modes import clamp_tree
from evals_pipeline.settings import Settings

MAX_MB_VAR = "EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB"
DEFAULT_MAX_MB = 256.0


class WorkspaceStateSettingError(ValueError, EvalsPipelineError):
    """EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB is not a number of megabytes."""


class KeptState(BaseModel):
    """Whether a run's workspace was kept when clean-up deleted it, and its size."""

    kept: bool
    state_bytes: int = Field(description="The files' size on disk, uncompressed.")
    archive_bytes: int | None = Field(default=None, description="The tar.gz's size, if kept.")
    not_kept: str | None = Field(default=None, description="Why it was not kept.")


def max_state_bytes(settings: Settings | None = None) -> int:
    """The cap on a kept state's files (EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB of `settings`,
    default: this process's; 256 when unset)."""
    text = ((settings or Settings.current()).workspace_state_max_mb or "").strip()
    if not text:
        return int(DEFAULT_MAX_MB * 1024 * 1024)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise WorkspaceStateSettingError(
            f"{MAX_MB_VAR}={text!r} is not a number of megabytes: use e.g. 256 (the default), "
            "or 0 to keep no workspace state"
        )
    return int(value * 1024 * 1024)


def _is_git_pointer(path: str) -> bool:
    """A `.git` file (not folder): a pointer into a repository kept elsewhere."""
    return os.path.basename(path) == ".git" and stat.S_ISREG(os.lstat(path).st_mode)


def _entries(workspace: Path) -> list[str]:
    """Every path under `workspace`, parents first, without following symlinks."""
    found: list[str] = []
    for folder, dirs, files in os.walk(workspace):  # os.walk lists symlinked folders unfollowed
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            if not _is_git_pointer(path):
                found.append(path)
        found.extend(
            os.path.join(folder, d) for d in dirs if not os.path.islink(os.path.join(folder, d))
        )
    return found


def _size(paths: list[str]) -> int:
    return sum(st.st_size for st in map(os.lstat, paths) if stat.S_ISREG(st.st_mode))


def _mb(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def archive_workspace(
    workspace: Path,
    destination: Path,
    max_bytes: int,
    scrub: Callable[[bytes], bytes] | None = None,
) -> KeptState:
    """Write `workspace`'s files to `destination` (tar.gz, replaced whole), each regular file's
    bytes through `scrub` when given, unless they take more than `max_bytes`."""
    entries = _entries(workspace)
    size = _size(entries)
    if size > max_bytes:
        return KeptState(
            kept=False,
            state_bytes=size,
            not_kept=f"its files take {_mb(size)}, over the {_mb(max_bytes)} cap ({MAX_MB_VAR})",
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.")
    try:
        with (
            os.fdopen(fd, "wb") as handle,
            tarfile.open(fileobj=handle, mode="w:gz", compresslevel=1) as tar,
        ):
            for path in entries:
                name = os.path.relpath(path, workspace)
                info = tar.gettarinfo(path, arcname=name)
                if info is None:  # a socket: nothing a grader reads
                    continue
                if not info.isreg():  # a folder, symlink or FIFO: kept as it is
                    tar.addfile(info)
                    continue
                with open(path, "rb") as source:
                    if scrub is None:
                        tar.addfile(info, source)
                        continue
                    data = scrub(source.read())
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, destination)
    except BaseException:
        os.unlink(tmp)
        raise
    return KeptState(kept=True, state_bytes=size, archive_bytes=destination.stat().st_size)


def restore_workspace(archive: Path, into: Path) -> None:
    """Unpack a kept state into the empty folder `into`, privately (no member lands outside)."""
    with tarfile.open(archive, mode="r:gz") as tar:
        tar.extractall(into, filter="tar")
    clamp_tree(into)
