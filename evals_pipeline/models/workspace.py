"""A resolved workspace: what each run's fresh folder is built from, every path absolute."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CleanupPolicy = Literal["on_success", "always", "never"]
"""When a run's workspace is deleted: `on_success` keeps it when the case failed or errored."""

DEFAULT_SETUP_TIMEOUT_MS = 60_000
"""before_all / before_each hooks, as in AgentV."""
DEFAULT_TEARDOWN_TIMEOUT_MS = 30_000
"""after_each / after_all hooks, as in AgentV."""

# `scheme://…` or scp-like `user@host:path`; a Windows drive letter (`C:\`) is not a host.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^([^/@:]+@)?[^/:\\]{2,}:")


_GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def repo_source(repo: str, base_dir: Path) -> str:
    """Where a `repo` value is fetched from: a URL as written; a local folder (relative to
    `base_dir`) when it exists; else `org/name` is GitHub's, as AgentV reads it
    (workspace/repo-identity.ts resolveRepoCloneUrl); else the local path it names."""
    if is_remote(repo):
        return repo
    local = Path(os.path.normpath(base_dir / Path(repo).expanduser()))
    shorthand = _GITHUB_SHORTHAND.match(repo.strip()) and not repo.startswith(("./", "../"))
    if not local.exists() and shorthand:
        return f"https://github.com/{repo.strip()}.git"
    return str(local)


def is_remote(repo: str) -> bool:
    """Whether a `repo` value is something git clones (a URL), not a local folder."""
    return bool(_URL.match(repo))


def workspace_relative(value: str) -> str:
    """`value` as a normalised relative path inside a workspace; ValueError if it leaves it."""
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute():
        raise ValueError(f"'{value}' is absolute; write a folder inside the workspace, e.g. repo")
    parts = [p for p in path.parts if p != "."]
    if ".." in parts:
        raise ValueError(f"'{value}' leaves the workspace; write a folder inside it, e.g. repo")
    if not parts:
        raise ValueError(
            f"'{value}' is the workspace root, which holds the baseline repository; "
            "write a folder inside it, e.g. repo"
        )
    if parts[0] == ".git":
        raise ValueError(f"'{value}' is inside the workspace's .git; choose another folder")
    return "/".join(parts)


class ResolvedRepo(BaseModel):
    """A git repository checked out into the workspace as a detached worktree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="Folder inside the workspace, relative, '/'-separated.")
    source: str = Field(description="An absolute local repository path, or a URL git can clone.")
    commit: str = Field(default="HEAD", min_length=1, description="Commit, branch or tag.")
    ancestor: int = Field(default=0, ge=0, description="First parents to go back from `commit`.")
    sparse: tuple[str, ...] = Field(
        default=(), description="Cone-mode sparse checkout of these folders; empty: everything."
    )

    @field_validator("path")
    @classmethod
    def _inside_workspace(cls, value: str) -> str:
        return workspace_relative(value)

    @field_validator("source")
    @classmethod
    def _absolute_or_url(cls, value: str) -> str:
        if not is_remote(value) and not Path(value).is_absolute():
            raise ValueError(f"repo source '{value}' must be a URL or an absolute path")
        return value

    @property
    def is_remote(self) -> bool:
        return is_remote(self.source)


ResetMode = Literal["none", "fast", "strict"]
"""after_each's workspace reset: fast = `git reset --hard` + `git clean -fd`, strict = `-fdx`."""


class ResolvedHook(BaseModel):
    """One hook command (a string runs through `sh -c`, a list is an argv) and its reset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str | list[str] | None = Field(default=None, description="None: a reset only.")
    timeout_ms: int = Field(gt=0)
    cwd: str = Field(description="Absolute folder the hook runs in.")
    reset: ResetMode = "none"

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if value is not None and (not value or (isinstance(value, str) and not value.strip())):
            raise ValueError("a hook command must not be empty")
        return value

    @field_validator("cwd")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not Path(value).is_absolute():
            raise ValueError(f"hook cwd '{value}' must be absolute")
        return value


class ResolvedHooks(BaseModel):
    """The hooks that run (none when the suite sets `hooks.enabled: false`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    before_all: ResolvedHook | None = None
    before_each: ResolvedHook | None = None
    after_each: ResolvedHook | None = None
    after_all: ResolvedHook | None = None


class ResolvedWorkspace(BaseModel):
    """How one run's workspace is built and when it is deleted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    template: str | None = Field(default=None, description="Absolute folder copied in first.")
    repos: list[ResolvedRepo] = Field(default_factory=list)
    hooks: ResolvedHooks = Field(default_factory=ResolvedHooks)
    cleanup: CleanupPolicy = "on_success"
    required_commands: tuple[str, ...] = Field(
        default=(), description="Preflight: commands that must be on PATH (`command -v`)."
    )
    required_python_modules: tuple[str, ...] = Field(
        default=(), description="Preflight: modules `python3 -c 'import m'` must find."
    )
    docker_image: str | None = Field(
        default=None,
        description="AgentV's grader container (workspace.docker); a case that has one is an "
        "error at run time here.",
    )

    @field_validator("template")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_absolute():
            raise ValueError(f"template '{value}' must be absolute")
        return value

    @field_validator("repos")
    @classmethod
    def _distinct_paths(cls, repos: list[ResolvedRepo]) -> list[ResolvedRepo]:
        paths = [r.path for r in repos]
        duplicates = sorted({p for p in paths if paths.count(p) > 1})
        if duplicates:
            raise ValueError(f"two repos share the path '{duplicates[0]}'")
        return repos
