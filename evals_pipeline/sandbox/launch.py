"""A child's command made into a sandboxed one: its policy completed with what the child must
still read (its working folder, the program and the files its command and its variables name,
which a private /tmp would hide), what it must not (hidden.py), and the folders every child may write
(EVALS_PIPELINE_SANDBOX_WRITABLE)."""

from __future__ import annotations

import functools
import os
import shlex
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import replace
from pathlib import Path

from evals_pipeline.sandbox.bubblewrap import NEVER_BOUND, bwrap_argv
from evals_pipeline.sandbox.hidden import hidden_paths
from evals_pipeline.sandbox.policy import SandboxPolicy
from evals_pipeline.settings import Settings

WRITABLE_VAR = "EVALS_PIPELINE_SANDBOX_WRITABLE"
"""Folders (os.pathsep-separated) every sandboxed child may also write: a package cache shared
by graders (`~/.cache/uv`), a log folder a test harness reads."""


def shared_writable(settings: Settings | None = None) -> tuple[Path, ...]:
    """The existing folders of EVALS_PIPELINE_SANDBOX_WRITABLE (of `settings`, default: this
    process's)."""
    value = (settings or Settings.current()).sandbox_writable or ""
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
    readable = [cwd, *_installation(), *_named_paths(command), *_env_paths(env)]
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


@functools.cache
def _installation() -> list[Path]:
    """Where the pipeline itself lives, which children run (`python3` is the pipeline's own,
    importing `evals_pipeline.grader`; the pinned agent CLIs sit beside a checkout): the venv,
    the Python it was made from, and the folder holding the `evals_pipeline` package."""
    package = Path(__file__).resolve().parents[1]
    return [Path(sys.prefix), Path(sys.base_prefix), package.parent]


def _with_prefix(folder: str) -> list[str]:
    """`folder`, and the prefix above it when it is a `bin` (a venv's, `node_modules/.bin`):
    what a program there runs lies beside it (site-packages, the package a `.bin` link points
    into)."""
    name = os.path.basename(os.path.normpath(folder))
    return (
        [folder, os.path.dirname(os.path.normpath(folder))] if name in ("bin", ".bin") else [folder]
    )


def _named_paths(command: str | list[str]) -> list[Path]:
    """The folders of the absolute paths a command names (its program, a script, a data file):
    `python3 /tmp/suite/check.py` must find check.py, and the modules beside it, under the
    private /tmp. A file right under /tmp is bound alone (bwrap_argv never binds /tmp whole)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else command
    except ValueError:
        words = command.split() if isinstance(command, str) else []
    found: list[Path] = []
    for word in words:
        if os.path.isabs(word) and os.path.exists(word):
            folder = word if os.path.isdir(word) else os.path.dirname(word)
            if os.path.realpath(folder) in NEVER_BOUND:
                found.append(Path(word))
            else:
                found += map(Path, _with_prefix(folder))
    return found


def _env_paths(env: Mapping[str, str]) -> list[Path]:
    """The files and folders the child's variables name (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS,
    UV_FIND_LINKS, ...): the child reads them, wherever they are. HOME and TMPDIR are the
    sandbox's own."""
    found: list[Path] = []
    for name, value in env.items():
        if name in ("HOME", "TMPDIR", "PWD") or "/" not in value:
            continue
        for part in value.split(os.pathsep):
            if os.path.isabs(part) and os.path.exists(part):
                found += map(Path, _with_prefix(part) if name == "PATH" else [part])
    return found
