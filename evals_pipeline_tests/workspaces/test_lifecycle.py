"""The lifecycle's edges: empty and template workspaces, re-runs, cleanup policy, setup errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.workspace import CleanupPolicy, ResolvedRepo, ResolvedWorkspace
from evals_pipeline.workspaces import (
    HookContext,
    WorkspaceRemovals,
    WorkspaceSetupError,
    create_workspace,
    file_changes,
    lifecycle,
    prepare_workspace,
    remove_workspace,
    should_remove,
)
from evals_pipeline.workspaces.manifest import state_dir
from evals_pipeline_tests.workspaces.conftest import SourceRepo, git


def test_without_a_spec_the_workspace_is_an_empty_git_work_tree(
    tmp_path: Path, context: HookContext
) -> None:
    ws = tmp_path / "run" / "workspace"
    prepared = prepare_workspace(None, ws, context, git_cache=tmp_path)
    assert [p.name for p in ws.iterdir()] == [".git"]
    assert git(ws, "status", "--porcelain") == ""
    assert file_changes(prepared) is None
    (ws / "hello.py").write_text("print('hello')\n")
    changes = file_changes(prepared)
    assert changes is not None and "+++ b/hello.py" in changes


def test_template_is_copied_without_its_git_and_dependencies(
    tmp_path: Path, context: HookContext
) -> None:
    template = tmp_path / "template"
    (template / "src").mkdir(parents=True)
    (template / "src/app.py").write_text("app\n")
    (template / "node_modules/dep").mkdir(parents=True)
    (template / ".git").mkdir()
    (template / "link").symlink_to("src/app.py")
    ws = tmp_path / "workspace"
    prepare_workspace(ResolvedWorkspace(template=str(template)), ws, context, git_cache=tmp_path)
    assert (ws / "src/app.py").read_text() == "app\n"
    assert not (ws / "node_modules").exists()
    assert (ws / "link").is_symlink()
    assert (ws / ".git").is_file()  # the baseline's pointer, not the template's repository


def test_the_state_folder_sits_beside_the_workspace(tmp_path: Path, context: HookContext) -> None:
    ws = tmp_path / "run" / "workspace"
    prepare_workspace(None, ws, context, git_cache=tmp_path)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [".workspace.state", "workspace"]
    assert (ws / ".git").read_text().strip().endswith(".workspace.state/baseline.git")


def test_a_rerun_at_the_same_path_starts_clean(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    spec = ResolvedWorkspace(repos=[ResolvedRepo(path="repo", source=str(source.path))])
    ws = tmp_path / "workspace"
    prepare_workspace(spec, ws, context, git_cache=tmp_path)
    (ws / "leftover.txt").write_text("old run\n")
    prepared = prepare_workspace(spec, ws, context, git_cache=tmp_path)
    assert not (ws / "leftover.txt").exists()
    assert source.worktrees() == [str(source.path), str(ws / "repo")]
    assert file_changes(prepared) is None


def test_a_missing_template_is_a_setup_error(tmp_path: Path, context: HookContext) -> None:
    spec = ResolvedWorkspace(template=str(tmp_path / "gone"))
    with pytest.raises(WorkspaceSetupError, match="cannot copy the workspace template"):
        prepare_workspace(spec, tmp_path / "workspace", context, git_cache=tmp_path)


def test_a_path_that_is_not_a_repository_is_a_setup_error(
    tmp_path: Path, context: HookContext
) -> None:
    (tmp_path / "plain").mkdir()
    spec = ResolvedWorkspace(repos=[ResolvedRepo(path="r", source=str(tmp_path / "plain"))])
    with pytest.raises(
        WorkspaceSetupError,
        match=r"cannot check out repo .*plain.*not the top folder of a git repository",
    ):
        prepare_workspace(spec, tmp_path / "workspace", context, git_cache=tmp_path)


def test_remove_workspace_of_nothing_is_a_no_op(tmp_path: Path) -> None:
    remove_workspace(tmp_path / "never-made")
    create_workspace(tmp_path / "plain", None)
    remove_workspace(tmp_path / "plain")  # no manifest: just deleted
    assert not (tmp_path / "plain").exists()


def test_removals_off_the_cases_path_are_all_done_when_the_block_ends(
    tmp_path: Path,
    context: HookContext,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Real workspaces (with their state folders) are gone once the block ends; one whose
    removal fails (the failure forced here: root deletes anything) is logged, the rest go on."""
    made = [tmp_path / f"run-{i}" / "workspace" for i in range(3)]
    for path in made:
        prepare_workspace(None, path, context, git_cache=tmp_path)
        assert state_dir(path).is_dir()
    real = lifecycle.remove_workspace

    def failing_for_the_first(path: Path) -> None:
        if path == made[0]:
            raise PermissionError(f"cannot remove {path}")
        real(path)

    monkeypatch.setattr(lifecycle, "remove_workspace", failing_for_the_first)
    with caplog.at_level("WARNING"), WorkspaceRemovals() as removals:
        for path in made:
            removals.remove(path)
    assert made[0].exists()
    assert not any(p.exists() or state_dir(p).exists() for p in made[1:])
    assert f"could not remove workspace {made[0]}" in caplog.text


@pytest.mark.parametrize(
    ("policy", "passed", "remove"),
    [
        ("on_success", True, True),
        ("on_success", False, False),
        ("on_success", None, False),
        ("always", False, True),
        ("always", None, True),
        ("never", True, False),
    ],
)
def test_should_remove(policy: CleanupPolicy, passed: bool | None, remove: bool) -> None:
    assert should_remove(policy, passed) is remove


def test_a_template_link_out_of_the_template_is_a_setup_error(
    tmp_path: Path, context: HookContext
) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "home").symlink_to(tmp_path)
    with pytest.raises(WorkspaceSetupError, match=r"symlink .*/home points outside the template"):
        prepare_workspace(
            ResolvedWorkspace(template=str(template)), tmp_path / "ws", context, git_cache=tmp_path
        )
