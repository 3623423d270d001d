"""Repositories as worktrees: the right commit, a cached clone for URLs, concurrent allocation."""

from __future__ import annotations

import multiprocessing
import shutil
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from evals_pipeline.models.workspace import ResolvedRepo, ResolvedWorkspace
from evals_pipeline.workspaces import (
    HookContext,
    WorkspaceSetupError,
    prepare_workspace,
    remove_workspace,
)
from evals_pipeline.workspaces.repos import cache_slug
from evals_pipeline_tests.workspaces.conftest import SourceRepo, git, make_repo


def repo_workspace(source: str, commit: str = "HEAD", path: str = "repo") -> ResolvedWorkspace:
    return ResolvedWorkspace(repos=[ResolvedRepo(path=path, source=source, commit=commit)])


def test_repo_is_a_detached_worktree_at_the_given_commit(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    ws = tmp_path / "run" / "workspace"
    spec = repo_workspace(str(source.path), source.first, path="deps/lib")
    prepared = prepare_workspace(spec, ws, context, git_cache=tmp_path / "cache")
    assert (ws / "deps/lib/f.txt").read_text() == "v1\n"  # the commit asked for, not HEAD
    assert git(ws / "deps/lib", "rev-parse", "HEAD") == source.first
    assert prepared.repos[0].commit == source.first
    assert str(ws / "deps/lib") in source.worktrees()
    assert (source.path / "f.txt").read_text() == "v2\n"  # the source is untouched


def test_branch_names_resolve_in_the_source(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    git(source.path, "branch", "old", source.first)
    ws = tmp_path / "workspace"
    prepare_workspace(repo_workspace(str(source.path), "old"), ws, context, git_cache=tmp_path)
    assert (ws / "repo/f.txt").read_text() == "v1\n"


def test_unknown_commit_is_a_setup_error(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    with pytest.raises(WorkspaceSetupError, match="commit 'no-such' not found"):
        prepare_workspace(
            repo_workspace(str(source.path), "no-such"),
            tmp_path / "workspace",
            context,
            git_cache=tmp_path / "cache",
        )


def test_url_is_cloned_once_into_the_cache(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    url = f"file://{source.path}"
    cache = tmp_path / "cache"
    spec = repo_workspace(url, source.first)
    prepare_workspace(spec, tmp_path / "a" / "workspace", context, git_cache=cache)
    mirror = cache / f"{cache_slug(url)}.git"
    marker = mirror / "cached-marker"
    marker.write_text("still here")
    prepare_workspace(spec, tmp_path / "b" / "workspace", context, git_cache=cache)

    assert marker.read_text() == "still here"  # reused, not cloned again
    assert sorted(p.name for p in cache.iterdir() if p.suffix == ".git") == [mirror.name]
    for run in ("a", "b"):
        assert (tmp_path / run / "workspace/repo/f.txt").read_text() == "v1\n"
    assert source.worktrees() == [str(source.path)]  # worktrees belong to the mirror

    remove_workspace(tmp_path / "a" / "workspace")
    listed = git(mirror, "worktree", "list", "--porcelain")
    assert str(tmp_path / "b" / "workspace/repo") in listed
    assert str(tmp_path / "a" / "workspace/repo") not in listed


def test_remove_workspace_detaches_its_worktrees(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    ws = tmp_path / "run" / "workspace"
    prepare_workspace(repo_workspace(str(source.path)), ws, context, git_cache=tmp_path)
    (ws / "repo" / "f.txt").write_text("dirty\n")  # the agent leaves changes behind
    remove_workspace(ws)
    assert not ws.exists()
    assert list((tmp_path / "run").iterdir()) == []  # the state folder went too
    assert source.worktrees() == [str(source.path)]
    assert not (source.path / ".git" / "worktrees").exists() or not any(
        (source.path / ".git" / "worktrees").iterdir()
    )


def test_remove_workspace_prunes_a_worktree_the_agent_deleted(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    ws = tmp_path / "workspace"
    prepare_workspace(repo_workspace(str(source.path)), ws, context, git_cache=tmp_path)
    shutil.rmtree(ws / "repo")
    remove_workspace(ws)
    assert source.worktrees() == [str(source.path)]


def test_eight_threads_allocate_worktrees_of_one_repository(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    spec = repo_workspace(str(source.path), source.first)
    paths = [tmp_path / f"run-{i}" / "workspace" for i in range(8)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda p: prepare_workspace(spec, p, context, git_cache=tmp_path), paths))

    listed = source.worktrees()
    for path in paths:
        assert (path / "repo/f.txt").read_text() == "v1\n"
        assert (path / "repo/keep.txt").read_text() == "kept\n"
        assert str(path / "repo") in listed
    assert len(listed) == 9

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(remove_workspace, paths))
    git(source.path, "worktree", "prune")
    assert source.worktrees() == [str(source.path)]


def _allocate_in_process(barrier: Barrier, source: str, commit: str, path: str) -> None:
    barrier.wait()  # all processes reach `git worktree add` together
    context = HookContext(test_id="case-1")
    workspace = Path(path)
    prepare_workspace(
        repo_workspace(source, commit), workspace, context, git_cache=workspace.parent / "cache"
    )


def test_processes_allocate_worktrees_of_one_repository(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source")
    paths = [tmp_path / f"proc-{i}" / "workspace" for i in range(4)]
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(len(paths))
    processes = [
        spawn.Process(
            target=_allocate_in_process, args=(barrier, str(source.path), source.first, str(p))
        )
        for p in paths
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [p.exitcode for p in processes] == [0] * len(paths)

    listed = source.worktrees()
    for path in paths:
        assert (path / "repo/f.txt").read_text() == "v1\n"
        assert str(path / "repo") in listed
    for path in paths:
        remove_workspace(path)
    assert source.worktrees() == [str(source.path)]
