"""The bubblewrap command line that runs an argv inside a SandboxPolicy."""

from __future__ import annotations

import os
from pathlib import Path

from evals_pipeline.sandbox.policy import SandboxPolicy

NEVER_BOUND = frozenset({"/", "/tmp"})
"""Never bound from the host as a whole: `/` is readable already, and binding `/tmp` would make
the private /tmp public again."""


def bwrap_argv(bwrap: str, policy: SandboxPolicy, argv: list[str], *, cwd: Path) -> list[str]:
    """`argv` wrapped in `bwrap`: a new PID namespace with its own /proc, the host read-only, a
    private /tmp, then the policy's folders bound back on top of it (binds come after the tmpfs,
    so a workspace under /tmp is the real one), in that order, and its hidden paths emptied.

    No --new-session: run_process already starts the child in a session of its own, without a
    terminal, and the tree's kill finds the sandbox's processes by that session."""
    args = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    if policy.network == "loopback":
        args.append("--unshare-net")
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]  # root inside must not remount what is read-only
    writable = [*policy.writable, *([policy.home] if policy.home else [])]
    for path in _outermost(policy.readable):
        if str(path) in NEVER_BOUND:
            continue
        if not any(_within(path, w) for w in writable) and path.exists():
            args += ["--ro-bind", str(path), str(path)]
    for path in _outermost(writable):
        if path.exists():
            args += ["--bind", str(path), str(path)]
    # Last, so no bind above shows them again.
    for path in _outermost(policy.hidden):
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return [*args, "--chdir", str(cwd), "--", *argv]


def _outermost(paths: tuple[Path, ...] | list[Path]) -> list[Path]:
    """The distinct resolved paths, parents before their children (a later bind of a parent
    would hide an earlier one of its child)."""
    resolved = {Path(os.path.realpath(p)) for p in paths}
    return sorted(resolved, key=lambda p: len(p.parts))


def _within(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
