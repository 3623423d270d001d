"""AgentV's repo `ancestor` and `sparse`, after_each `reset`, and the `env` preflight, with real
git and real processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.workspace import (
    ResolvedHook,
    ResolvedHooks,
    ResolvedRepo,
    ResolvedWorkspace,
)
from evals_pipeline.workspaces import (
    HookContext,
    WorkspaceSetupError,
    file_changes,
    finish_workspace,
    prepare_workspace,
)
from evals_pipeline_tests.workspaces.conftest import SourceRepo, git


def test_ancestor_goes_back_first_parents(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    spec = ResolvedWorkspace(
        repos=[ResolvedRepo(path="repo", source=str(source.path), commit="HEAD", ancestor=1)]
    )
    prepared = prepare_workspace(spec, tmp_path / "ws", context, git_cache=tmp_path / "c")
    assert git(tmp_path / "ws/repo", "rev-parse", "HEAD") == source.first
    assert prepared.repos[0].commit == source.first


def test_an_ancestor_beyond_the_history_is_a_setup_error(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    spec = ResolvedWorkspace(
        repos=[ResolvedRepo(path="repo", source=str(source.path), commit="HEAD", ancestor=5)]
    )
    with pytest.raises(WorkspaceSetupError, match="cannot go 5 commit"):
        prepare_workspace(spec, tmp_path / "ws", context, git_cache=tmp_path / "c")


def test_sparse_checks_out_only_the_listed_folders(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    (source.path / "src").mkdir()
    (source.path / "src/a.py").write_text("a\n")
    (source.path / "docs").mkdir()
    (source.path / "docs/b.md").write_text("b\n")
    git(source.path, "add", "--all")
    git(source.path, "commit", "--quiet", "-m", "folders")
    spec = ResolvedWorkspace(
        repos=[ResolvedRepo(path="repo", source=str(source.path), sparse=("src",))]
    )
    prepared = prepare_workspace(spec, tmp_path / "ws", context, git_cache=tmp_path / "c")
    repo = tmp_path / "ws/repo"
    assert (repo / "src/a.py").is_file()
    assert not (repo / "docs").exists()
    assert (repo / "f.txt").is_file()  # cone mode keeps the top-level files
    assert "sparse" not in git(source.path, "config", "--list")  # the source is untouched
    (repo / "src/a.py").write_text("changed\n")
    changes = file_changes(prepared)
    assert changes is not None and "repo/src/a.py" in changes


def test_after_each_reset_puts_repos_back_before_the_hook(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    seen = tmp_path / "seen.txt"
    after = ResolvedHook(
        command=f"cat {{{{workspace_path}}}}/repo/f.txt > {seen}; ls {{{{workspace_path}}}}/repo >> {seen}",
        timeout_ms=10_000,
        cwd=str(tmp_path),
        reset="fast",
    )
    spec = ResolvedWorkspace(
        repos=[ResolvedRepo(path="repo", source=str(source.path), commit=source.first)],
        hooks=ResolvedHooks(after_each=after),
    )
    prepared = prepare_workspace(spec, tmp_path / "ws", context, git_cache=tmp_path / "c")
    (tmp_path / "ws/repo/f.txt").write_text("agent\n")
    (tmp_path / "ws/repo/new.txt").write_text("agent\n")
    (tmp_path / "ws/top.txt").write_text("outside the repo\n")
    assert finish_workspace(prepared, context) == []
    # The hook saw the reset repo; the workspace outside the repos is left (AgentV's rule).
    assert seen.read_text() == "v1\nf.txt\nkeep.txt\n"
    assert (tmp_path / "ws/top.txt").is_file()


def test_after_each_reset_of_a_workspace_without_repos(
    tmp_path: Path, context: HookContext
) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a\n")
    reset_only = ResolvedHook(timeout_ms=1000, cwd=str(tmp_path), reset="strict")
    spec = ResolvedWorkspace(template=str(template), hooks=ResolvedHooks(after_each=reset_only))
    ws = tmp_path / "ws"
    prepared = prepare_workspace(spec, ws, context, git_cache=tmp_path / "c")
    (ws / "a.txt").write_text("edited\n")
    (ws / "b.txt").write_text("new\n")
    assert finish_workspace(prepared, context) == []
    assert (ws / "a.txt").read_text() == "a\n"
    assert not (ws / "b.txt").exists()


def test_preflight_names_what_is_missing(tmp_path: Path, context: HookContext) -> None:
    spec = ResolvedWorkspace(
        required_commands=("sh", "no-such-command-xyz"),
        required_python_modules=("json", "no_such_module_xyz"),
    )
    with pytest.raises(WorkspaceSetupError) as caught:
        prepare_workspace(spec, tmp_path / "ws", context, git_cache=tmp_path / "c")
    assert str(caught.value) == (
        "Preflight checks failed — missing dependencies: command: no-such-command-xyz, "
        "python module: no_such_module_xyz. Install them before running this eval "
        "(workspace.env)."
    )
    ok = ResolvedWorkspace(required_commands=("sh",), required_python_modules=("json",))
    prepare_workspace(ok, tmp_path / "ws2", context, git_cache=tmp_path / "c")
