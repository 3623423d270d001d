"""The bubblewrap command line that runs an argv inside a SandboxPolicy."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from evals_pipeline.sandbox.policy import SandboxPolicy

NEVER_BOUND = frozenset({"/", "/tmp"})
"""Never bound from the host as a whole: `/` is readable already, and binding `/tmp` would make
the private /tmp public again."""
PRIVATE_TMP = "/tmp"
"""The one host folder the sandbox covers with a tmpfs before the policy's binds: a readable
path elsewhere shows through the read-only `/` as is, so only those under it are bound again."""


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
    writable = _outermost([*policy.writable, *([policy.home] if policy.home else [])])
    # Each mount costs the child's start (~0.3 ms): only what the private /tmp hides is bound
    # again, since the read-only `/` shows the rest as it is.
    hidden_by_tmp = [p for p in map(_resolved, policy.readable) if _inside(p, PRIVATE_TMP)]
    for path in _outermost([p for p in hidden_by_tmp if p not in NEVER_BOUND]):
        if not any(_inside(path, w) for w in writable) and os.path.exists(path):
            args += ["--ro-bind", path, path]
    for path in writable:
        if os.path.exists(path):
            args += ["--bind", path, path]
    # Last, so no bind above shows them again; resolved afresh, never from the cache.
    for path in _outermost([os.path.realpath(p) for p in policy.hidden]):
        if os.path.isdir(path):
            args += ["--tmpfs", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    return [*args, "--chdir", str(cwd), "--", *argv]


def _outermost(paths: list[str] | list[Path]) -> list[str]:
    """The distinct resolved paths without those inside another of them (binding a parent
    shows its children already), parents first."""
    kept: list[str] = []
    for path in sorted({_resolved(p) for p in paths}, key=lambda p: p.count("/")):
        if not any(_inside(path, parent) for parent in kept):
            kept.append(path)
    return kept


@functools.lru_cache(maxsize=4096)
def _resolved(path: str | Path) -> str:
    """`path` with its links resolved. Cached: a run's thousands of children name the same few
    folders (the venv, PATH, the suite), and resolving one costs a stat per part."""
    return os.path.realpath(path)


def _inside(path: str, folder: str) -> bool:
    """Whether resolved `path` is `folder` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
