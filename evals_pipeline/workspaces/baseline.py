"""The git baseline of a workspace, and the unified diff of what changed since (file_changes).

AgentV's rule (format §7.3): before the agent runs, everything in the workspace is committed to
a fresh repository; afterwards, the diff against that commit is the run's file_changes. Nested
repositories (the worktrees, or any folder with its own `.git`) are left out of the outer diff
and diffed on their own, with their paths prefixed, so one diff shows every change.

Choices beyond AgentV's, and why:

- The baseline repository's git folder lives in the state folder beside the workspace (the
  workspace gets a `.git` file pointing there): an agent that deletes or rewrites `.git` cannot
  take the baseline with it.
- Each nested repository's baseline is its whole working state (a tree written into the
  baseline repository), not its HEAD, so what `before_all` changed there stays out of the diff
  just as it does at the top level. Worktree objects are borrowed via git alternates, so
  large repositories are not copied.
- Nested repositories are left out of `git add` through an excludes file (git fails an `add`
  whose exclude pathspec names an ignored path) and recorded in the baseline commit as gitlinks,
  as `git add` would, so the agent's `git status` at the top starts clean.
- Every capture stages into a temporary index: the workspace's own indexes stay as the agent
  left them, so a grader running `git diff` there still sees the agent's unstaged changes.
- If git fails at the baseline, a snapshot of text files is taken instead (snapshot.py); if it
  fails at capture, the baseline trees are read back and diffed the same way.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import re
import shutil
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.workspaces.git import GitError, run_git
from evals_pipeline.workspaces.snapshot import (
    MAX_FILE_BYTES,
    Snapshot,
    as_text,
    is_snapshotted,
    load_snapshot,
    save_snapshot,
    snapshot_diff,
    take_snapshot,
)

log = logging.getLogger(__name__)

GIT_TIMEOUT_SECONDS = 300.0
BASELINE_MESSAGE = "evals-pipeline baseline"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""Git's tree of no files (SHA-1 repositories: a SHA-256 one never matches it, and is diffed)."""


@dataclass(frozen=True)
class RootBaseline:
    """One repository root of the workspace at baseline time ("" is the workspace itself)."""

    path: str
    tree: str
    index: Path
    """The index staged at baseline time: it seeds the capture's index, so only changed files
    are hashed again."""


@dataclass(frozen=True)
class Baseline:
    """What the workspace looked like before the agent: git trees, or a text snapshot."""

    workspace: Path
    git_dir: Path | None
    """The baseline repository; None when git failed and `snapshot` is used instead."""
    commit: str | None = None
    roots: tuple[RootBaseline, ...] = ()
    snapshot: Path | None = None
    error: str | None = None
    """Why git could not take the baseline, when it could not."""


def take_baseline(workspace: Path, state: Path) -> Baseline:
    """Record the workspace as it is now; falls back to a text snapshot if git fails."""
    try:
        return _GitBaseline(workspace, state / "baseline.git").take()
    except (GitError, OSError) as exc:
        log.warning("git baseline of %s failed, using a file snapshot: %s", workspace, exc)
        snapshot = state / "snapshot.json"
        save_snapshot(take_snapshot(workspace), snapshot)
        return Baseline(workspace, None, snapshot=snapshot, error=str(exc))


def capture_changes(baseline: Baseline) -> str | None:
    """The unified diff from the baseline to the workspace now; None when nothing changed."""
    workspace = baseline.workspace
    if baseline.git_dir is None:
        assert baseline.snapshot is not None
        return snapshot_diff(load_snapshot(baseline.snapshot), take_snapshot(workspace))
    try:
        return _GitCapture(baseline).changes()
    except (GitError, OSError) as exc:
        log.warning("git diff of %s failed, using a file snapshot: %s", workspace, exc)
    return snapshot_diff(_baseline_files(baseline), take_snapshot(workspace))


def find_nested_repos(workspace: Path) -> list[str]:
    """Relative paths of every folder below the workspace root that has its own `.git`."""
    found: list[str] = []
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        here = Path(folder)
        if here != workspace and (".git" in files or (here / ".git").is_dir()):
            found.append(here.relative_to(workspace).as_posix())
    return found


def _inner(root: str, roots: list[str]) -> list[str]:
    """The repositories nested in `root`, relative to it."""
    return [
        other[len(root) + 1 :] if root else other
        for other in roots
        if other != root and (root == "" or other.startswith(root + "/"))
    ]


def _ignore_pattern(path: str) -> str:
    """A gitignore line matching exactly the folder `path` (relative to the top)."""
    escaped = re.sub(r"([*?\[\\!#])", r"\\\1", path)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return f"/{escaped}/"


class _BaselineRepo:
    """The baseline repository: git commands against it, for any folder of the workspace."""

    def __init__(self, workspace: Path, git_dir: Path) -> None:
        self.workspace = workspace
        self.git_dir = git_dir
        self.state = git_dir.parent

    def git(
        self,
        *args: str,
        work_tree: Path | None = None,
        index: Path | None = None,
        stdin: bytes | None = None,
    ) -> bytes:
        return run_git(
            args,
            cwd=work_tree or self.state,
            git_dir=self.git_dir,
            work_tree=work_tree,
            index_file=index,
            stdin=stdin,
            timeout_seconds=GIT_TIMEOUT_SECONDS,
        ).stdout

    def text(self, *args: str, index: Path | None = None) -> str:
        return self.git(*args, index=index).decode().strip()

    def stage(self, root: str, inner: list[str], index: Path | None = None) -> None:
        """Stage every file of `root` except its nested repositories into `index`."""
        # Left out through an excludes file, not pathspecs: git fails an `add` whose pathspec
        # names a path that a .gitignore also ignores.
        excludes = self.state / "stage-excludes"
        excludes.write_text("".join(f"{_ignore_pattern(path)}\n" for path in inner))
        folder = self.workspace / root if root else self.workspace
        self.git(
            "-c", f"core.excludesFile={excludes}", "add", "--all", work_tree=folder, index=index
        )

    def diff(self, root: str, inner: list[str], before: str, index: Path | None) -> bytes:
        """The diff of `root` from the `before` tree to `index` (to nothing, when None)."""
        folder = f"{root}/" if root else ""
        options = [
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            f"--src-prefix=a/{folder}",
            f"--dst-prefix=b/{folder}",
        ]
        # Tracked files under a repository made after the baseline stay in the index: the
        # pathspec keeps them out of this root's diff (they are in that repository's).
        spec = ["--", ":(top)", *(f":(top,exclude,literal){path}" for path in inner)]
        if index is None:
            return self.git("diff", *options, before, self.empty_tree(), *spec)
        return self.git("diff", "--cached", *options, before, *spec, index=index)

    def empty_tree(self) -> str:
        return self.git("hash-object", "-t", "tree", "-w", "--stdin", stdin=b"").decode().strip()


class _GitBaseline(_BaselineRepo):
    def take(self, *, reuse_empty: bool = True) -> Baseline:
        self.state.mkdir(parents=True, exist_ok=True)
        if self.git_dir.exists():
            shutil.rmtree(self.git_dir)
        if reuse_empty and not any(self.workspace.iterdir()):
            return self._copy(_empty_baseline())
        # No template: git's sample hooks and description are a score of files per case to
        # write and delete, and the baseline needs none of them.
        run_git(
            [
                "init",
                "--quiet",
                "--template=",
                f"--separate-git-dir={self.git_dir}",
                str(self.workspace),
            ],
            cwd=self.state,
        )
        # Relative, so the trial's folder still works where it is copied (an object-store
        # root's mirror on another worker, storage/root.py).
        link = self.workspace / ".git"
        if link.is_file():
            link.write_text(f"gitdir: {os.path.relpath(self.git_dir, self.workspace)}\n")
        nested = find_nested_repos(self.workspace)
        repos = {path: _NestedRepo.inspect(self.workspace, path) for path in nested}
        alternates = sorted({str(r.objects) for r in repos.values() if r.objects is not None})
        if alternates:
            (self.git_dir / "objects" / "info" / "alternates").write_text(
                "".join(f"{line}\n" for line in alternates)
            )

        if not _holds_nothing(self.workspace):  # a workspace without a spec has nothing to add
            self.stage("", nested)
        for path, repo in repos.items():
            if repo.head and not _inner_of_any(path, nested):
                # A gitlink, as `git add` would record it: the agent's `git status` at the top
                # starts clean instead of listing the repository as untracked.
                self.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head},{path}")
        self.git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", BASELINE_MESSAGE)
        outer_index = self.state / "index-0"
        with contextlib.suppress(FileNotFoundError):  # an empty workspace has no index
            shutil.copyfile(self.git_dir / "index", outer_index)
        commit, tree = self.text("rev-parse", "HEAD", "HEAD^{tree}").split()
        roots = [RootBaseline("", tree, outer_index)]
        for number, path in enumerate(nested, start=1):
            index = self.state / f"index-{number}"
            roots.append(RootBaseline(path, self._tree(path, nested, index, repos[path]), index))
        return Baseline(self.workspace, self.git_dir, commit=commit, roots=tuple(roots))

    def _copy(self, empty: _EmptyBaseline) -> Baseline:
        """The baseline of an empty workspace: a copy of this process's empty baseline."""
        empty.git_dir.write(self.git_dir)
        (self.workspace / ".git").write_text(
            f"gitdir: {os.path.relpath(self.git_dir, self.workspace)}\n"
        )
        roots = []
        for root in empty.baseline.roots:
            index = self.state / root.index.name
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(root.index, index)
            roots.append(RootBaseline(root.path, root.tree, index))
        return Baseline(
            self.workspace, self.git_dir, commit=empty.baseline.commit, roots=tuple(roots)
        )

    def _tree(self, path: str, nested: list[str], index: Path, repo: _NestedRepo) -> str:
        if repo.objects is not None and repo.index is not None and repo.index.is_file():
            # The repository's own index knows which files are unchanged since checkout.
            shutil.copyfile(repo.index, index)
            try:
                self.stage(path, _inner(path, nested), index)
                return self.text("write-tree", index=index)
            except GitError:
                index.unlink()  # an index git cannot reuse here (e.g. split): stage afresh
        self.stage(path, _inner(path, nested), index)
        return self.text("write-tree", index=index)


@dataclass(frozen=True)
class _FolderImage:
    """A small folder held in memory, written out again with a few plain calls per entry: an
    empty baseline per case, where copytree also copies every entry's times and modes."""

    folders: tuple[str, ...]  # relative, parents first
    files: tuple[tuple[str, bytes], ...]

    @staticmethod
    def of(root: Path, leave_out: frozenset[str]) -> _FolderImage:
        folders: list[str] = []
        files: list[tuple[str, bytes]] = []
        for here, dirs, names in os.walk(root):
            relative = os.path.relpath(here, root)
            inner = sorted(os.path.normpath(os.path.join(relative, d)) for d in dirs)
            kept = [d for d in inner if d not in leave_out]
            dirs[:] = [os.path.basename(d) for d in kept]
            folders.extend(kept)
            for name in sorted(names):
                path = os.path.normpath(os.path.join(relative, name))
                if path not in leave_out:
                    files.append((path, Path(here, name).read_bytes()))
        return _FolderImage(tuple(folders), tuple(files))

    def write(self, to: Path) -> None:
        to.mkdir()
        for folder in self.folders:
            os.mkdir(to / folder)
        for path, data in self.files:
            fd = os.open(to / path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)


# What a copy needs of git's fresh repository: not the message and reflog of the baseline commit,
# nor folders git makes when it needs them.
_NOT_COPIED = frozenset({"COMMIT_EDITMSG", "logs", "refs/tags", "objects/info", "objects/pack"})


@dataclass(frozen=True)
class _EmptyBaseline:
    """The baseline of an empty workspace, and its git folder as an image to copy."""

    baseline: Baseline
    git_dir: _FolderImage


_EMPTY_LOCK = threading.Lock()
_empty: tuple[int, _EmptyBaseline] | None = None  # the process that took it, and the baseline


def _empty_baseline() -> _EmptyBaseline:
    """The baseline of an empty workspace, taken once per process in a folder that process
    removes at exit (a forked child takes its own, and never removes its parent's). Every
    workspace without a spec gets a copy (the same commit and tree): three git processes per
    case, done once."""
    global _empty
    with _EMPTY_LOCK:
        if _empty is None or _empty[0] != os.getpid():
            folder = Path(tempfile.mkdtemp(prefix="evals-pipeline-empty-baseline-"))
            atexit.register(_remove_own, folder, os.getpid())
            workspace = folder / "workspace"
            workspace.mkdir()
            taken = _GitBaseline(workspace, folder / "state" / "baseline.git").take(
                reuse_empty=False
            )
            assert taken.git_dir is not None
            image = _FolderImage.of(taken.git_dir, _NOT_COPIED)
            _empty = (os.getpid(), _EmptyBaseline(taken, image))
        return _empty[1]


def _remove_own(folder: Path, owner: int) -> None:
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def _holds_nothing(workspace: Path) -> bool:
    """The workspace has no entry but its `.git` link."""
    with os.scandir(workspace) as entries:
        return all(entry.name == ".git" for entry in entries)


def _inner_of_any(path: str, roots: list[str]) -> bool:
    return any(path.startswith(other + "/") for other in roots)


@dataclass(frozen=True)
class _NestedRepo:
    """What the baseline borrows from a nested repository."""

    head: str | None
    index: Path | None
    objects: Path | None
    """Its object folder, when that lies outside the workspace (a worktree's source): only then
    can it be borrowed through git alternates, since the agent may delete anything inside."""

    @staticmethod
    def inspect(workspace: Path, path: str) -> _NestedRepo:
        folder = workspace / path
        try:
            head: str | None = run_git(
                ["rev-parse", "--verify", "--quiet", "HEAD"], cwd=folder
            ).text
        except GitError:
            head = None  # no commit yet
        try:
            index, common = run_git(
                ["rev-parse", "--path-format=absolute", "--git-path", "index", "--git-common-dir"],
                cwd=folder,
            ).text.splitlines()
        except (GitError, ValueError):
            return _NestedRepo(head, None, None)
        if Path(common).resolve().is_relative_to(workspace.resolve()):
            return _NestedRepo(head, None, None)
        return _NestedRepo(head, Path(index), Path(common) / "objects")


class _GitCapture(_BaselineRepo):
    def __init__(self, baseline: Baseline) -> None:
        assert baseline.git_dir is not None
        super().__init__(baseline.workspace, baseline.git_dir)
        self.trees = {root.path: root for root in baseline.roots}

    def changes(self) -> str | None:
        empty_before = set(self.trees) == {""} and self.trees[""].tree == EMPTY_TREE
        if empty_before and _holds_nothing(self.workspace):  # no git needed to say so
            return None
        now = find_nested_repos(self.workspace)
        roots = ["", *sorted((self.trees.keys() | set(now)) - {""})]
        parts = [self._root_diff(root, roots) for root in roots]
        return b"".join(parts).decode("utf-8", "replace") or None

    def _root_diff(self, root: str, roots: list[str]) -> bytes:
        before = self._before(root)
        inner = _inner(root, roots)
        folder = self.workspace / root if root else self.workspace
        if not folder.is_dir() or folder.is_symlink():
            return self.diff(root, inner, before, None)  # the whole repository was deleted
        index = self.state / "capture-index"
        index.unlink(missing_ok=True)
        saved = self.trees[root].index if root in self.trees else None
        if saved is not None and saved.is_file():
            shutil.copyfile(saved, index)
        try:
            self.stage(root, inner, index)
            return self.diff(root, inner, before, index)
        finally:
            index.unlink(missing_ok=True)

    def _before(self, root: str) -> str:
        """The baseline tree of a root; for a repository made after the baseline, the part of
        its enclosing root's tree at its path (or nothing, if the folder did not exist)."""
        if root in self.trees:
            return self.trees[root].tree
        owner = max((r for r in self.trees if r == "" or root.startswith(r + "/")), key=len)
        relative = root[len(owner) + 1 :] if owner else root
        try:
            sha = self.text(
                "rev-parse", "--verify", "--quiet", f"{self.trees[owner].tree}:{relative}"
            )
            if self.text("cat-file", "-t", sha) == "tree":
                return sha
        except GitError:
            pass
        return self.empty_tree()


def _baseline_files(baseline: Baseline) -> Snapshot:
    """The baseline's text files, read back from its git trees (for the snapshot fallback)."""
    files: Snapshot = {}
    if baseline.git_dir is None:
        return files
    for root in baseline.roots:
        try:
            archive = run_git(
                ["archive", "--format=tar", root.tree],
                cwd=baseline.git_dir,
                git_dir=baseline.git_dir,
                timeout_seconds=GIT_TIMEOUT_SECONDS,
            ).stdout
        except GitError as exc:
            log.error("cannot read the baseline of %s/%s: %s", baseline.workspace, root.path, exc)
            continue
        try:
            files.update(_text_files(archive, root.path))
        except tarfile.TarError as exc:
            log.error("cannot read the baseline of %s/%s: %s", baseline.workspace, root.path, exc)
    return files


def _text_files(archive: bytes, prefix: str) -> Snapshot:
    files: Snapshot = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if not member.isfile() or member.size > MAX_FILE_BYTES:
                continue
            path = f"{prefix}/{member.name}" if prefix else member.name
            handle = tar.extractfile(member)
            text = as_text(handle.read()) if handle else None
            if text is not None and is_snapshotted(path):
                files[path] = text
    return files
