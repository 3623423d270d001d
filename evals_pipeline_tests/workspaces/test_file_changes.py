"""file_changes: one unified diff of everything since the baseline, nested repositories included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evals_pipeline.models.workspace import ResolvedHooks, ResolvedRepo, ResolvedWorkspace
from evals_pipeline.workspaces import (
    HookContext,
    PreparedWorkspace,
    baseline,
    file_changes,
    prepare_workspace,
)
from evals_pipeline.workspaces.baseline import _NOT_COPIED, EMPTY_TREE, _FolderImage
from evals_pipeline_tests.workspaces.conftest import SourceRepo, git, hook


def prepared_template(tmp_path: Path, context: HookContext, **spec: object) -> PreparedWorkspace:
    template = tmp_path / "template"
    template.mkdir()
    (template / "edit.txt").write_text("one\ntwo\n")
    (template / "delete.txt").write_text("bye\n")
    (template / "same.txt").write_text("unchanged\n")
    workspace = ResolvedWorkspace.model_validate({"template": str(template), **spec})
    return prepare_workspace(workspace, tmp_path / "workspace", context, git_cache=tmp_path)


def diff_sections(diff: str | None) -> dict[str, str]:
    """Each file's part of a diff, by its `b/` path (`a/` path for deletions)."""
    assert diff is not None
    sections: dict[str, str] = {}
    for part in diff.split("diff --git ")[1:]:
        header = part.split("\n", 1)[0]
        path = header.split(" b/", 1)[1]
        sections[path] = part
    return sections


def test_no_change_is_none(tmp_path: Path, context: HookContext) -> None:
    prepared = prepared_template(tmp_path, context)
    assert file_changes(prepared) is None


def test_new_edited_deleted_and_binary_files(tmp_path: Path, context: HookContext) -> None:
    prepared = prepared_template(tmp_path, context)
    ws = prepared.path
    (ws / "edit.txt").write_text("one\n2\n")
    (ws / "delete.txt").unlink()
    (ws / "src").mkdir()
    (ws / "src/new.py").write_text("print('hi')\n")
    (ws / "image.bin").write_bytes(b"\x89PNG\0\x01\x02")

    sections = diff_sections(file_changes(prepared))
    assert sorted(sections) == ["delete.txt", "edit.txt", "image.bin", "src/new.py"]
    assert "-two\n+2\n" in sections["edit.txt"]
    assert "deleted file mode" in sections["delete.txt"] and "-bye" in sections["delete.txt"]
    assert "new file mode" in sections["src/new.py"] and "+print('hi')" in sections["src/new.py"]
    assert "Binary files /dev/null and b/image.bin differ" in sections["image.bin"]


def test_changes_inside_a_worktree_repo_are_prefixed_with_its_path(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    repos = [ResolvedRepo(path="vendor/lib", source=str(source.path), commit=source.first)]
    prepared = prepared_template(tmp_path, context, repos=repos)
    ws = prepared.path
    (ws / "vendor/lib/f.txt").write_text("agent\n")
    (ws / "vendor/lib/added.txt").write_text("new\n")
    (ws / "vendor/lib/keep.txt").unlink()
    (ws / "edit.txt").write_text("top\n")

    diff = file_changes(prepared)
    sections = diff_sections(diff)
    assert sorted(sections) == [
        "edit.txt",
        "vendor/lib/added.txt",
        "vendor/lib/f.txt",
        "vendor/lib/keep.txt",
    ]
    assert "--- a/vendor/lib/f.txt\n+++ b/vendor/lib/f.txt" in sections["vendor/lib/f.txt"]
    assert "-v1\n+agent" in sections["vendor/lib/f.txt"]
    assert diff is not None and "Subproject commit" not in diff
    # The agent's own view of the repository is untouched: nothing was staged for it.
    assert git(ws / "vendor/lib", "diff", "--cached", "--name-only") == ""
    assert "f.txt" in git(ws / "vendor/lib", "diff", "--name-only")


def test_commits_made_by_the_agent_in_a_worktree_still_show(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    repos = [ResolvedRepo(path="repo", source=str(source.path), commit=source.first)]
    prepared = prepared_template(tmp_path, context, repos=repos)
    repo = prepared.path / "repo"
    (repo / "f.txt").write_text("committed\n")
    git(repo, "commit", "--quiet", "-am", "agent commit")
    assert "-v1\n+committed" in diff_sections(file_changes(prepared))["repo/f.txt"]


def test_setup_hook_changes_are_not_file_changes(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    # AgentV 4.42.4 takes a fresh baseline after before_each (workspace/setup.ts).
    hooks = ResolvedHooks(
        before_all=hook(
            "cd {{workspace_path}} && echo setup > setup.txt && echo tweak > repo/f.txt", tmp_path
        ),
        before_each=hook("cd {{workspace_path}} && echo each > each.txt", tmp_path),
    )
    repos = [ResolvedRepo(path="repo", source=str(source.path), commit=source.first)]
    prepared = prepared_template(tmp_path, context, hooks=hooks, repos=repos)
    assert (prepared.path / "setup.txt").exists() and (prepared.path / "each.txt").exists()
    assert file_changes(prepared) is None
    (prepared.path / "agent.txt").write_text("agent\n")
    assert sorted(diff_sections(file_changes(prepared))) == ["agent.txt"]


def test_a_repository_the_agent_creates_is_diffed_as_files(
    tmp_path: Path, context: HookContext
) -> None:
    prepared = prepared_template(tmp_path, context)
    ws = prepared.path
    (ws / "fresh").mkdir()
    (ws / "fresh/a.txt").write_text("a\n")
    git(ws / "fresh", "init", "--quiet")  # no commit: `git add` of the parent would fail
    (ws / "sub").mkdir()
    (ws / "sub/b.txt").write_text("b\n")
    sections = diff_sections(file_changes(prepared))
    assert sorted(sections) == ["fresh/a.txt", "sub/b.txt"]
    assert "+a" in sections["fresh/a.txt"]


def test_git_init_over_existing_files_shows_only_real_changes(
    tmp_path: Path, context: HookContext
) -> None:
    prepared = prepared_template(tmp_path, context)
    ws = prepared.path
    shutil.move(ws / "same.txt", ws / "pkg.txt")  # keep content, new place
    (ws / "pkg").mkdir()
    prepared_files = {"pkg/x.txt": "x\n", "pkg/y.txt": "y\n"}
    for name, text in prepared_files.items():
        (ws / name).write_text(text)
    sections = diff_sections(file_changes(prepared))
    assert "pkg/x.txt" in sections
    # Now the agent turns pkg/ into a repository and edits one file: no duplicate entries.
    git(ws / "pkg", "init", "--quiet")
    (ws / "pkg/x.txt").write_text("x2\n")
    sections = diff_sections(file_changes(prepared))
    assert [k for k in sections if k.startswith("pkg/")] == ["pkg/x.txt", "pkg/y.txt"]
    assert "+x2" in sections["pkg/x.txt"]


def test_deleting_the_workspace_git_does_not_lose_the_baseline(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    repos = [ResolvedRepo(path="repo", source=str(source.path), commit=source.first)]
    prepared = prepared_template(tmp_path, context, repos=repos)
    ws = prepared.path
    assert git(ws, "status", "--porcelain") == ""  # the agent starts in a clean work tree
    (ws / ".git").unlink()
    shutil.rmtree(ws / "repo")
    (ws / "edit.txt").write_text("x\n")
    sections = diff_sections(file_changes(prepared))
    assert sorted(sections) == ["edit.txt", "repo/f.txt", "repo/keep.txt"]
    assert "deleted file mode" in sections["repo/f.txt"]


def test_without_git_a_text_snapshot_is_diffed(
    tmp_path: Path, context: HookContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    prepared = prepared_template(tmp_path, context)
    assert prepared.baseline.git_dir is None and prepared.baseline.error
    ws = prepared.path
    (ws / "edit.txt").write_text("one\n2\n")
    (ws / "delete.txt").unlink()
    (ws / "new.txt").write_text("fresh")
    (ws / "image.bin").write_bytes(b"\0\1")  # binary: not in a snapshot
    (ws / "node_modules").mkdir()
    (ws / "node_modules/dep.js").write_text("skipped\n")

    sections = diff_sections(file_changes(prepared))
    assert sorted(sections) == ["delete.txt", "edit.txt", "new.txt"]
    assert "-two\n+2\n" in sections["edit.txt"]
    assert "+fresh\n\\ No newline at end of file" in sections["new.txt"]
    assert "deleted file mode" in sections["delete.txt"]


def test_a_failing_git_diff_falls_back_to_the_baseline_trees(
    tmp_path: Path, source: SourceRepo, context: HookContext
) -> None:
    repos = [ResolvedRepo(path="repo", source=str(source.path), commit=source.first)]
    prepared = prepared_template(tmp_path, context, repos=repos)
    for root in prepared.baseline.roots:
        root.index.write_bytes(b"not an index")  # git refuses to read it
    (prepared.path / "edit.txt").write_text("changed\n")
    (prepared.path / "repo/f.txt").write_text("agent\n")
    sections = diff_sections(file_changes(prepared))
    assert sorted(sections) == ["edit.txt", "repo/f.txt"]
    assert "-v1\n+agent" in sections["repo/f.txt"]


def test_a_workspace_without_a_spec_is_an_empty_repository_and_its_changes_still_show(
    tmp_path: Path, context: HookContext
) -> None:
    """No spec: an empty folder committed as git's empty tree; left empty it has no changes
    (said without running git), and a file the agent writes there is a new file in the diff."""
    prepared = prepare_workspace(None, tmp_path / "workspace", context, git_cache=tmp_path)
    assert git(prepared.path, "rev-parse", "HEAD^{tree}") == EMPTY_TREE
    assert git(prepared.path, "status", "--porcelain") == ""
    assert file_changes(prepared) is None
    (prepared.path / "empty-folder").mkdir()
    assert file_changes(prepared) is None
    (prepared.path / "empty-folder" / "new.txt").write_text("hello\n")
    sections = diff_sections(file_changes(prepared))
    assert list(sections) == ["empty-folder/new.txt"]
    assert "new file mode" in sections["empty-folder/new.txt"]
    assert "+hello" in sections["empty-folder/new.txt"]


def test_empty_workspaces_copy_one_baseline_and_keep_their_own_repositories(
    tmp_path: Path, context: HookContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The empty baseline is taken once per process (its git processes run once); each
    workspace gets its own copy, so what one agent commits stays out of the others."""
    calls: list[list[str]] = []
    real = baseline.run_git
    monkeypatch.setattr(
        baseline, "run_git", lambda args, **kw: calls.append(args) or real(args, **kw)
    )
    first, second = (
        prepare_workspace(None, tmp_path / name, context, git_cache=tmp_path)
        for name in ("first", "second")
    )
    before = len(calls)
    third = prepare_workspace(None, tmp_path / "third", context, git_cache=tmp_path)
    assert len(calls) == before  # a copy: no git process
    heads = {git(p.path, "rev-parse", "HEAD") for p in (first, second, third)}
    assert len(heads) == 1
    (first.path / "mine.txt").write_text("first's\n")
    git(first.path, "add", "mine.txt")
    git(first.path, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "agent")
    assert git(second.path, "rev-parse", "HEAD") == heads.pop()
    assert git(second.path, "status", "--porcelain") == ""
    (second.path / "theirs.txt").write_text("second's\n")
    assert list(diff_sections(file_changes(second))) == ["theirs.txt"]
    assert list(diff_sections(file_changes(first))) == ["mine.txt"]


def test_the_copied_git_folder_leaves_out_what_a_copy_never_reads(tmp_path: Path) -> None:
    # Every workspace without a spec gets a copy of one empty baseline's git folder: what it
    # leaves out (the reflogs, the commit message) is written and removed for no one, per case.
    for folder in ("logs/refs/heads", "objects/4b", "objects/pack", "refs/heads"):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("HEAD", "COMMIT_EDITMSG", "logs/HEAD", "objects/4b/82", "refs/heads/main"):
        (tmp_path / file).write_text(file)
    image = _FolderImage.of(tmp_path, _NOT_COPIED)
    assert image.folders == ("objects", "refs", "objects/4b", "refs/heads")
    assert [path for path, _ in image.files] == ["HEAD", "objects/4b/82", "refs/heads/main"]
    image.write(tmp_path / "copy")
    assert (tmp_path / "copy" / "refs" / "heads" / "main").read_text() == "refs/heads/main"
    assert not (tmp_path / "copy" / "logs").exists()
