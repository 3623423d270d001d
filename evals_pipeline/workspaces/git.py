"""Running git isolated from the user's setup: no global or system config, no hooks, no signing.

Workspaces must come out the same on every machine, and a user's `commit.gpgsign`, global
ignores or `post-checkout` hook must neither break a run nor leak into its baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.process import child_env, run_process

DEFAULT_TIMEOUT_SECONDS = 120.0
CLONE_TIMEOUT_SECONDS = 900.0
STDERR_TAIL_CHARS = 2_000

IDENTITY = {
    "GIT_AUTHOR_NAME": "evals-pipeline",
    "GIT_AUTHOR_EMAIL": "evals-pipeline@localhost",
    "GIT_COMMITTER_NAME": "evals-pipeline",
    "GIT_COMMITTER_EMAIL": "evals-pipeline@localhost",
}

# Settings that would otherwise come from the user's config, or change what git prints.
_CONFIG = (
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "core.hooksPath=/dev/null",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "core.fsmonitor=false",
    "core.quotePath=false",
    "init.defaultBranch=main",
    "advice.detachedHead=false",
    "gc.auto=0",
)

# Remote access over ssh needs the agent; proxies and CA bundles pass to every child
# (process.NETWORK_ENV).
_SSH_ENV = ("SSH_AUTH_SOCK",)


class GitError(RuntimeError, EvalsPipelineError):
    """A git command that failed; the message holds the command and the tail of its stderr."""

    def __init__(self, command: Sequence[str], detail: str, exit_code: int | None = None) -> None:
        self.command = list(command)
        self.detail = detail
        self.exit_code = exit_code
        """None when git did not run to the end (missing, or timed out)."""
        super().__init__(f"{' '.join(self.command)} failed: {detail}")


@dataclass(frozen=True)
class GitOutput:
    stdout: bytes

    @property
    def text(self) -> str:
        """stdout decoded (invalid UTF-8 replaced) and stripped of surrounding whitespace."""
        return self.stdout.decode("utf-8", "replace").strip()


def git_env(index_file: Path | None = None) -> dict[str, str]:
    """The environment of every git command: allowlisted, no user config, a fixed identity."""
    extra = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
        **IDENTITY,
    }
    if index_file is not None:
        extra["GIT_INDEX_FILE"] = str(index_file)
    return child_env(extra, allow=_SSH_ENV)


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index_file: Path | None = None,
    stdin: bytes | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> GitOutput:
    """Run `git <args>` in `cwd`; raises GitError when it cannot start, fails or times out."""
    command = ["git"]
    for setting in _CONFIG:
        command += ["-c", setting]
    if git_dir is not None:
        command.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        command.append(f"--work-tree={work_tree}")
    command += list(args)
    shown = ["git", *command[len(_CONFIG) * 2 + 1 :]]
    result = run_process(
        command,
        cwd=cwd,
        env=git_env(index_file),
        timeout_seconds=timeout_seconds,
        stdin=stdin,
    )
    if result.error is not None:
        raise GitError(shown, result.error)
    if result.timed_out:
        raise GitError(shown, f"timed out after {timeout_seconds:g} s")
    if result.exit_code != 0:
        stderr = result.stderr.strip()[-STDERR_TAIL_CHARS:] or "(no stderr)"
        raise GitError(shown, f"exit code {result.exit_code}: {stderr}", result.exit_code)
    return GitOutput(result.stdout)


def is_repository_root(folder: Path) -> bool:
    """Whether `folder` is the top of a git work tree or a bare repository (no git run)."""
    if (folder / ".git").exists():
        return True
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir()
