"""Real git repositories and hooks in temporary folders, shared by the workspace tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from evals_pipeline.models.workspace import ResolvedHook
from evals_pipeline.workspaces import HookContext
from evals_pipeline.workspaces.git import run_git


def git(cwd: Path, *args: str) -> str:
    """Run git the way the pipeline does (isolated config) and return its output."""
    return run_git(args, cwd=cwd).text


@dataclass(frozen=True)
class SourceRepo:
    """A repository with two commits: `first` has f.txt = v1, `second` (HEAD) has v2."""

    path: Path
    first: str
    second: str

    def worktrees(self) -> list[str]:
        """The worktree folders `git worktree list` shows, the main one first."""
        lines = git(self.path, "worktree", "list", "--porcelain").splitlines()
        return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


def make_repo(path: Path) -> SourceRepo:
    path.mkdir(parents=True)
    git(path, "init", "--quiet")
    (path / "f.txt").write_text("v1\n")
    (path / "keep.txt").write_text("kept\n")
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "first")
    first = git(path, "rev-parse", "HEAD")
    (path / "f.txt").write_text("v2\n")
    git(path, "commit", "--quiet", "-am", "second")
    return SourceRepo(path, first, git(path, "rev-parse", "HEAD"))


@pytest.fixture
def source(tmp_path: Path) -> SourceRepo:
    return make_repo(tmp_path / "source")


@pytest.fixture
def context() -> HookContext:
    return HookContext(
        test_id="case-1", eval_run_id="run-7", case_input="Fix it.", case_metadata={"level": 2}
    )


def hook(command: str | list[str], cwd: Path, timeout_ms: int = 10_000) -> ResolvedHook:
    return ResolvedHook(command=command, timeout_ms=timeout_ms, cwd=str(cwd))
