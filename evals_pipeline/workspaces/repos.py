"""Repositories in a workspace: each a detached `git worktree` of its source at a commit.

A worktree shares the source's objects, so checking out a large repository is fast and takes
little disk. A URL is cloned once (`git clone --mirror`) into a cache folder and reused; worktree
changes are serialised per repository (see locks.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.models.workspace import ResolvedRepo
from evals_pipeline.workspaces.git import (
    CLONE_TIMEOUT_SECONDS,
    GitError,
    is_repository_root,
    run_git,
)
from evals_pipeline.workspaces.locks import file_lock, repository_lock
from evals_pipeline.workspaces.manifest import WorktreeRecord, record_worktree

_fetched_guard = threading.Lock()
_fetched_this_process: set[str] = set()


@dataclass(frozen=True)
class MaterializedRepo:
    """A repository as it was placed in a workspace."""

    path: str
    """Folder inside the workspace, relative."""
    worktree: Path
    git_dir: Path
    """The source repository's common git folder (the cached mirror for a URL)."""
    commit: str
    """The full commit id checked out."""


def materialize_repo(repo: ResolvedRepo, workspace: Path, *, git_cache: Path) -> MaterializedRepo:
    """Check `repo` out at its commit as a detached worktree at `<workspace>/<repo.path>`.

    Raises GitError (command and stderr) when the source, the commit or the checkout fails.
    """
    source = cached_clone(repo.source, git_cache) if repo.is_remote else Path(repo.source)
    if not is_repository_root(source):
        # git would find an enclosing repository and check out all of it instead.
        raise GitError(
            ["git", "worktree", "add"], f"{source} is not the top folder of a git repository"
        )
    git_dir = common_git_dir(source)
    commit = checkout_commit(source, repo)
    dest = workspace / repo.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    if repo.sparse:
        # A sparse checkout is a setting of the checkout itself: a local clone (objects
        # hard-linked) keeps it out of the source repository's config, as AgentV's clone does.
        run_git(["clone", "--quiet", "--no-checkout", "--", str(source), str(dest)], cwd=source)
        run_git(["sparse-checkout", "set", "--cone", "--", *repo.sparse], cwd=dest)
        run_git(["checkout", "--quiet", "--detach", commit], cwd=dest)
        return MaterializedRepo(path=repo.path, worktree=dest, git_dir=dest / ".git", commit=commit)
    with file_lock(repository_lock(git_dir)):
        record_worktree(workspace, WorktreeRecord(worktree=str(dest), git_dir=str(git_dir)))
        run_git(["worktree", "add", "--detach", str(dest), commit], cwd=source)
    return MaterializedRepo(path=repo.path, worktree=dest, git_dir=git_dir, commit=commit)


def checkout_commit(source: Path, repo: ResolvedRepo) -> str:
    """The full id of the commit to check out: `commit`, then `ancestor` first parents back."""
    commit = resolve_commit(source, repo.commit)
    if not repo.ancestor:
        return commit
    try:
        return resolve_commit(source, f"{commit}~{repo.ancestor}")
    except GitError as exc:
        if exc.exit_code is None:
            raise
        raise GitError(
            exc.command,
            f"cannot go {repo.ancestor} commit(s) back from '{repo.commit}' in {source}: the "
            "history is shorter",
            1,
        ) from exc


def reset_checkout(worktree: Path, commit: str, mode: str) -> None:
    """Put a checkout back to `commit`: `git reset --hard`, then `git clean -fd` (fast) or
    `-fdx` (strict), as AgentV's after_each `reset` does."""
    run_git(["reset", "--quiet", "--hard", commit], cwd=worktree)
    run_git(["clean", "-fdx" if mode == "strict" else "-fd", "--quiet"], cwd=worktree)


def remove_worktree(worktree: Path, git_dir: Path) -> None:
    """Detach a worktree from its repository and delete its folder.

    A worktree that is already gone (or no longer one) is left to `prune_worktrees`, which the
    caller runs once the workspace folder is deleted.
    """
    if not git_dir.is_dir():
        return
    with file_lock(repository_lock(git_dir)), contextlib.suppress(GitError):
        # Twice --force: also removes a worktree the agent left dirty or locked.
        run_git(
            ["worktree", "remove", "--force", "--force", str(worktree)],
            cwd=git_dir,
            git_dir=git_dir,
        )


def prune_worktrees(git_dir: Path) -> None:
    """Forget worktrees of a repository whose folders no longer exist."""
    if not git_dir.is_dir():
        return
    with file_lock(repository_lock(git_dir)):
        run_git(["worktree", "prune"], cwd=git_dir, git_dir=git_dir)


def common_git_dir(source: Path) -> Path:
    """The git folder shared by all worktrees of the repository at `source`."""
    output = run_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=source)
    return Path(output.text)


def resolve_commit(source: Path, commit: str) -> str:
    """The full id of `commit` (a commit, branch or tag) in the repository at `source`."""
    try:
        output = run_git(
            ["rev-parse", "--verify", "--end-of-options", f"{commit}^{{commit}}"], cwd=source
        )
    except GitError as exc:
        if exc.exit_code is None:
            raise
        raise GitError(exc.command, f"commit '{commit}' not found in {source}", 1) from exc
    return output.text


def cached_clone(url: str, git_cache: Path) -> Path:
    """A mirror of `url` under `git_cache`, cloned on first use and fetched once per process."""
    mirror = git_cache / f"{cache_slug(url)}.git"
    with file_lock(git_cache / f"{cache_slug(url)}.lock"):
        if not (mirror / "HEAD").is_file():
            _clone(url, mirror)
            with _fetched_guard:
                _fetched_this_process.add(str(mirror))
    with _fetched_guard:
        fetched = str(mirror) in _fetched_this_process
        _fetched_this_process.add(str(mirror))
    if not fetched:
        # Branches move: refresh the mirror once per process; a stale mirror still serves
        # commits it has when the remote is unreachable.
        with file_lock(repository_lock(mirror)), contextlib.suppress(GitError):
            run_git(
                ["fetch", "--prune", "origin"], cwd=mirror, timeout_seconds=CLONE_TIMEOUT_SECONDS
            )
    return mirror


def cache_slug(url: str) -> str:
    """A readable, unique folder name for a URL: `host-org-name-<hash>`."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", url.split("://", 1)[-1]).strip("-.")[-60:]
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return f"{readable}-{digest}" if readable else digest


def _clone(url: str, mirror: Path) -> None:
    mirror.parent.mkdir(parents=True, exist_ok=True)
    # Clone beside the cache entry and rename, so an interrupted clone leaves no half mirror.
    staging = Path(tempfile.mkdtemp(dir=mirror.parent, prefix=f".{mirror.name}-"))
    try:
        run_git(
            ["clone", "--mirror", "--quiet", "--", url, str(staging / "repo.git")],
            cwd=mirror.parent,
            timeout_seconds=CLONE_TIMEOUT_SECONDS,
        )
        (staging / "repo.git").rename(mirror)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
