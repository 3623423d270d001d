"""How every grader program runs (code graders, code aggregators, prompt templates,
preprocessors): with a private HOME made for it and removed after, never the runner's, and in
the OS sandbox, where it may write only the graded workspace and that HOME."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

# Loading the agent registry registers every agent's logins with sandbox/ (hidden.py): a grader
# hides them even in a process that only grades (`assert`, a grading step), with no agent run.
import evals_pipeline.agents.registry  # noqa: F401
from evals_pipeline.process import ProcessResult, child_env, run_process
from evals_pipeline.sandbox.policy import SandboxPolicy
from evals_pipeline.scratch import remove_scratch
from evals_pipeline.suites.file_boundary import file_boundary

HOME_PREFIX = "evals-grader-home-"


def run_grader(
    command: str | list[str],
    *,
    cwd: Path,
    timeout_seconds: float,
    stdin: bytes,
    extra_env: Mapping[str, str] | None = None,
    workspace: str | None = None,
    readable: Iterable[str | Path] = (),
    suite_dir: str | Path | None = None,
) -> ProcessResult:
    """Run a grader program on `stdin`. `workspace` (the agent's, which graders may test and
    build in) is writable; `readable` names files or folders it reads that the sandbox's
    private /tmp would otherwise hide (payload side files); `suite_dir` (the eval file's folder)
    makes the suite's repository readable, where its scripts and packages lie. Graders share the host's network:
    they install packages (bunx, uvx) and reach the target proxy on the host's loopback."""
    home = tempfile.mkdtemp(prefix=HOME_PREFIX)  # not a TemporaryDirectory: no finalizer, no walk
    try:
        env = child_env({**(extra_env or {}), "HOME": home})
        policy = SandboxPolicy(
            writable=tuple(Path(p) for p in [workspace] if p),
            readable=tuple(Path(p) for p in readable) + _suite_folders(suite_dir),
            home=Path(home),
        )
        return run_process(
            command,
            cwd=cwd,
            env=env,
            timeout_seconds=timeout_seconds,
            stdin=stdin,
            sandbox=policy,
        )
    finally:
        remove_scratch(home)


@functools.lru_cache(maxsize=64)
def _suite_folders(suite_dir: str | Path | None) -> tuple[Path, ...]:
    """The suite's folder and its repository's. Cached: every grader of a suite asks, and
    finding the repository costs a stat for each folder up to it."""
    if suite_dir is None:
        return ()
    return (file_boundary(Path(suite_dir)), Path(suite_dir))
