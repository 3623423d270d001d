"""A child's command made into a sandboxed one: its policy completed with what the child must
still read (its working folder, the program and the files its command names, which a private
/tmp would hide), what it must not (hidden.py), and the folders every child may write
(EVALS_PIPELINE_SANDBOX_WRITABLE)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, MutableMapping
from dataclasses import replace
from pathlib import Path

from evals_pipeline.sandbox.bubblewrap import bwrap_argv
from evals_pipeline.sandbox.hidden import hidden_paths
from evals_pipeline.sandbox.policy import SandboxPolicy

WRITABLE_VAR = "EVALS_PIPELINE_SANDBOX_WRITABLE"
"""Folders (os.pathsep-separated) every sandboxed child may also write: a package cache shared
by graders (`~/.cache/uv`), a log folder a test harness reads."""


def shared_writable(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The existing folders of EVALS_PIPELINE_SANDBOX_WRITABLE."""
    value = (os.environ if env is None else env).get(WRITABLE_VAR, "")
    return tuple(Path(p) for p in value.split(os.pathsep) if p and os.path.isdir(p))


def sandboxed_argv(
    bwrap: str,
    command: str | list[str],
    cwd: Path,
    env: MutableMapping[str, str],
    sandbox: SandboxPolicy,
) -> list[str]:
    """`command` run by `bwrap` under `sandbox`, completed; sets HOME and TMPDIR in `env` for
    the sandbox."""
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    readable = [cwd, *_named_paths(command)]
    user_home = sandbox.home is None and bool(env.get("HOME"))
    if user_home:
        readable.append(Path(env["HOME"]))  # the user's own (`home: user`), read-only
    policy = replace(
        sandbox,
        readable=(*sandbox.readable, *readable),
        writable=(*sandbox.writable, *shared_writable()),
        hidden=hidden_paths(user_home_visible=user_home),
    )
    if policy.home is not None:
        env["HOME"] = str(policy.home)
    if "TMPDIR" in env:
        env["TMPDIR"] = "/tmp"  # the private one; the host's may be hidden or read-only
    return bwrap_argv(bwrap, policy, argv, cwd=cwd)


def _named_paths(command: str | list[str]) -> list[Path]:
    """The folders of the absolute paths a command names (its program, a script, a data file):
    `python3 /tmp/suite/check.py` must find check.py under the private /tmp."""
    try:
        words = shlex.split(command) if isinstance(command, str) else command
    except ValueError:
        words = command.split() if isinstance(command, str) else []
    found = []
    for word in words:
        if os.path.isabs(word) and os.path.exists(word):
            found.append(Path(word) if os.path.isdir(word) else Path(word).parent)
    return found
