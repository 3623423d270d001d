"""The sandbox an agent run gets: its target's setting applied to the run's folders."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.targets import AgentTarget, CliTarget
from evals_pipeline.sandbox.detection import bubblewrap
from evals_pipeline.sandbox.policy import SandboxPolicy
from evals_pipeline.suites.file_boundary import file_boundary


def runs_sandboxed(target: CliTarget | AgentTarget) -> bool:
    """Whether `target`'s runs will be in the OS sandbox: it does not opt out and bubblewrap
    works here."""
    return target.sandbox and bubblewrap() is not None


def run_sandbox(
    target: CliTarget | AgentTarget,
    case: ResolvedCase,
    ctx: RunContext,
    home: Path | None,
    *,
    runs_in: Path | None = None,
) -> SandboxPolicy | None:
    """The workspace and the run's folder writable, `home` as HOME, the suite's folder and the
    input files readable (the suite's whole repository: its scripts and packages may lie above the
    eval file's folder); None when the target opts out (`sandbox: false`).

    `runs_in`: the folder a `cli` command runs in when the suite gives it no workspace (its
    `cwd`, else the eval file's folder). It is that command's workspace, writable, as under
    AgentV (a batch runner writing its input CSV there); a suite gives it a `workspace:` to keep
    it off the suite's files."""
    if not target.sandbox:
        return None
    base_dir = Path(case.base_dir)
    readable = [file_boundary(base_dir), base_dir, *(Path(p).parent for p in case.input_files)]
    own = (runs_in,) if runs_in is not None else ()
    return SandboxPolicy(
        writable=(ctx.workspace, ctx.artifacts, *own),
        readable=tuple(readable),
        home=home,
        network=target.sandbox_network,
    )
