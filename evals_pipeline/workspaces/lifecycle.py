"""A run's workspace from start to end, in AgentV's order (format §7.1):

template copy → repos (worktrees) → before_all → target before_all → before_each →
target before_each → git baseline → [agent] → file changes → target after_each → reset →
after_each → target after_all → after_all → cleanup. Target hooks are those of the suite's
`execution.targets[]` entry for the run's agent.

Each run gets its own workspace (AgentV's `isolation: per_test`), so `before_all` and `after_all`
run once per run. The baseline comes after the setup hooks, as in AgentV 4.42.4 (the reference's
§7.1 puts it before before_each; AgentV's code takes a fresh one after it): what the hooks do is
part of the starting point, not of file_changes. `workspace.env` is checked first (preflight);
after_each's `reset` puts the repos (or, without repos, the workspace) back before after_each
runs, as in AgentV, so graders then see the reset workspace.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.file_modes import clamp_tree
from evals_pipeline.models.workspace import (
    CleanupPolicy,
    ResolvedHook,
    ResolvedHooks,
    ResolvedWorkspace,
)
from evals_pipeline.process import child_env, run_process
from evals_pipeline.scratch import make_writable_and_retry
from evals_pipeline.workspaces.baseline import Baseline, capture_changes, take_baseline
from evals_pipeline.workspaces.git import GitError
from evals_pipeline.workspaces.hooks import HookContext, HookResult, run_hook
from evals_pipeline.workspaces.manifest import read_manifest, state_dir
from evals_pipeline.workspaces.repos import (
    MaterializedRepo,
    materialize_repo,
    prune_worktrees,
    remove_worktree,
    reset_checkout,
)
from evals_pipeline.workspaces.template import create_workspace

log = logging.getLogger(__name__)


class WorkspaceSetupError(RuntimeError, EvalsPipelineError):
    """The workspace could not be prepared: the run is an error at the setup stage."""

    def __init__(self, message: str, hook: HookResult | None = None) -> None:
        super().__init__(message)
        self.hook = hook
        """The failed before_* hook, when a hook failed."""


@dataclass(frozen=True)
class PreparedWorkspace:
    """A workspace ready for the agent."""

    path: Path
    spec: ResolvedWorkspace | None
    repos: tuple[MaterializedRepo, ...]
    baseline: Baseline
    setup_hooks: tuple[HookResult, ...]
    """before_all and before_each, with their output."""
    target_hooks: ResolvedHooks | None = None
    """The agent's target hooks (run inside the workspace's)."""


def prepare_workspace(
    workspace: ResolvedWorkspace | None,
    path: Path,
    context: HookContext,
    *,
    git_cache: Path,
    target_hooks: ResolvedHooks | None = None,
) -> PreparedWorkspace:
    """Build a fresh workspace at `path` and take its baseline, running the setup hooks.

    Without a spec the workspace is an empty folder (still a git work tree with a baseline).
    A URL repo is cloned once into `git_cache`. Raises WorkspaceSetupError; the caller removes
    the half-built workspace (remove_workspace) or keeps it to look at.
    """
    remove_workspace(path)  # a re-run starts clean, its old worktrees detached first
    if workspace is not None:
        missing = missing_requirements(workspace)
        if missing:
            raise WorkspaceSetupError(
                "Preflight checks failed — missing dependencies: "
                + ", ".join(missing)
                + ". Install them before running this eval (workspace.env)."
            )
    template = workspace.template if workspace else None
    try:
        create_workspace(path, template)
        if template:
            clamp_tree(path)  # the template's modes (a 0755 script) copied: made private
    except OSError as exc:
        raise WorkspaceSetupError(f"cannot copy the workspace template {template}: {exc}") from exc
    repos: list[MaterializedRepo] = []
    for repo in workspace.repos if workspace else []:
        try:
            repos.append(materialize_repo(repo, path, git_cache=git_cache))
        except (GitError, OSError) as exc:
            raise WorkspaceSetupError(
                f"cannot check out repo {repo.source} at '{repo.commit}' into {repo.path}: {exc}"
            ) from exc
    hooks = workspace.hooks if workspace else None
    ran: list[HookResult] = []
    for name, hook in (
        ("before_all", hooks.before_all if hooks else None),
        ("target before_all", target_hooks.before_all if target_hooks else None),
        ("before_each", hooks.before_each if hooks else None),
        ("target before_each", target_hooks.before_each if target_hooks else None),
    ):
        if hook and hook.command is not None:
            ran.append(_setup_hook(name, hook, path, context))
    # After the setup hooks, as AgentV 4.42.4 takes it (workspace/setup.ts: a before_each that
    # ran asks for a fresh baseline): what the hooks set up is not part of file_changes.
    baseline = take_baseline(path, state_dir(path))
    return PreparedWorkspace(path, workspace, tuple(repos), baseline, tuple(ran), target_hooks)


def file_changes(prepared: PreparedWorkspace) -> str | None:
    """Everything the run changed since the baseline, as one unified diff; None if nothing."""
    return capture_changes(prepared.baseline)


def missing_requirements(workspace: ResolvedWorkspace) -> list[str]:
    """What `workspace.env` needs that is not installed, as AgentV's preflight words it:
    `command: x` when `command -v x` fails, `python module: m` when `python3 -c 'import m'`
    fails (with the children's environment, so the same python3 graders get)."""
    missing: list[str] = []
    env = child_env()
    checks = [
        (f"command -v {shlex.quote(c)}", f"command: {c}") for c in workspace.required_commands
    ]
    checks += [
        (f"python3 -c {shlex.quote(f'import {m}')}", f"python module: {m}")
        for m in workspace.required_python_modules
    ]
    for command, label in checks:
        result = run_process(command, cwd=Path.cwd(), env=env, timeout_seconds=60)
        if result.exit_code != 0:
            missing.append(label)
    return missing


def finish_workspace(prepared: PreparedWorkspace, context: HookContext) -> list[str]:
    """Run the after hooks (target after_each, after_each's `reset`, after_each, target
    after_all, after_all); a failure is a warning (AgentV's rule), never raised."""
    hooks = prepared.spec.hooks if prepared.spec else None
    target = prepared.target_hooks
    warnings = _after_hook(
        "target after_each", target.after_each if target else None, prepared, context
    )
    if hooks and hooks.after_each and hooks.after_each.reset != "none":
        try:
            _reset(prepared, hooks.after_each.reset)
        except (GitError, OSError) as exc:
            warnings.append(f"after_each reset ({hooks.after_each.reset}) failed: {exc}")
    for name, hook in (
        ("after_each", hooks.after_each if hooks else None),
        ("target after_all", target.after_all if target else None),
        ("after_all", hooks.after_all if hooks else None),
    ):
        warnings += _after_hook(name, hook, prepared, context)
    return warnings


def _after_hook(
    name: str, hook: ResolvedHook | None, prepared: PreparedWorkspace, context: HookContext
) -> list[str]:
    """Run one teardown hook; its failure is a warning, never raised."""
    if hook is None or hook.command is None:
        return []
    try:
        result = run_hook(name, hook, prepared.path, context)
    except Exception as exc:  # a teardown problem must not turn a graded run into a crash
        return [f"{name} hook could not run: {exc}"]
    return [] if result.ok else [result.describe()]


def remove_workspace(path: Path) -> None:
    """Delete a workspace and its state, detaching its worktrees from their repositories first.

    Works from the path alone (the worktrees are listed in the state folder's manifest), so a
    workspace kept by an earlier run can be removed later. Missing pieces are skipped.
    """
    worktrees = read_manifest(path).worktrees
    for record in worktrees:
        remove_worktree(Path(record.worktree), Path(record.git_dir))
    _delete_tree(path)
    _delete_tree(state_dir(path))
    for git_dir in sorted({record.git_dir for record in worktrees}):
        with contextlib.suppress(GitError):
            prune_worktrees(Path(git_dir))


class WorkspaceRemovals:
    """Workspaces removed on one thread of their own while the caller goes on: deleting a
    workspace's files (~20 ms where the disk discards freed blocks) is not on a case's path.
    Leaving the block waits for every removal; one that fails is logged, not raised (the case
    it belongs to is already graded)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="workspace-removal")

    def __enter__(self) -> WorkspaceRemovals:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Wait for every removal."""
        self._pool.shutdown(wait=True)

    def remove(self, path: Path, keep: Callable[[Path], None] | None = None) -> None:
        """Delete `path`; `keep` is handed it first (to keep its final state)."""
        self._pool.submit(self._remove, path, keep)

    @staticmethod
    def _remove(path: Path, keep: Callable[[Path], None] | None) -> None:
        if keep is not None and path.is_dir():
            try:
                keep(path)
            except Exception as exc:  # logged: a re-grade then runs the agent again
                log.warning("could not keep the final state of workspace %s: %s", path, exc)
        try:
            remove_workspace(path)
        except Exception as exc:  # logged: a leftover folder is not a case's error
            log.warning("could not remove workspace %s: %s", path, exc)


def should_remove(policy: CleanupPolicy, passed: bool | None) -> bool:
    """Whether to delete a finished run's workspace; `passed` is None when the run errored."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    return passed is True


def _reset(prepared: PreparedWorkspace, mode: str) -> None:
    if prepared.repos:
        for repo in prepared.repos:
            reset_checkout(repo.worktree, repo.commit, mode)
    elif prepared.baseline.commit is not None:
        reset_checkout(prepared.path, prepared.baseline.commit, mode)


def _setup_hook(name: str, hook: ResolvedHook, path: Path, context: HookContext) -> HookResult:
    result = run_hook(name, hook, path, context)
    if not result.ok:
        raise WorkspaceSetupError(result.describe(), hook=result)
    return result


def _delete_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        # Agents leave read-only files and folders (e.g. Go's module cache): make them writable.
        shutil.rmtree(path, onerror=make_writable_and_retry)
