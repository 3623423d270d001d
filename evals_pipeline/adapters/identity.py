"""What an agent target is, beyond its config: the version of the CLI it runs and the auth it
uses. Both are recorded with every result; the version is part of the result-cache key.

The version is probed once per process and command (`claude --version`, `codex --version`,
`pi --version`; a `cli` target's `version_command`, when it has one), in a throwaway home so
probing touches nothing of the user's.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from evals_pipeline.adapters.agent_cli import AgentSetupError, find_executable
from evals_pipeline.adapters.auth import AuthPlan
from evals_pipeline.agents.registry import cli_adapter
from evals_pipeline.models.targets import AgentTarget, CliTarget, TargetSpec
from evals_pipeline.process import child_env, run_process

VERSION_TIMEOUT_SECONDS = 30.0
VERSION_MAX_CHARS = 200

_versions: dict[tuple[str, ...], str | None] = {}
_locks: dict[tuple[str, ...], threading.Lock] = {}
_guard = threading.Lock()


def agent_version(target: TargetSpec, base_dir: str) -> str | None:
    """The version the target's agent reports (the first line its version command prints), or
    None: not an agent CLI nor a `cli` target with `version_command`, or the probe failed.

    Memoized per process and command: a run of 1,000 cases probes each CLI once. `base_dir` (the
    eval file's folder) is where a `cli` target's `version_command` runs unless it sets `cwd`.
    """
    adapter = cli_adapter(target)
    if isinstance(target, AgentTarget) and adapter is not None:
        try:
            exe = find_executable(target, adapter.binary)
        except AgentSetupError:
            return None
        argv = [exe, "--version"]
        return _memoized(tuple(argv), lambda: _run(argv, base_dir, {}, adapter.probe_env))
    if isinstance(target, CliTarget) and target.version_command:
        cwd = target.cwd or base_dir
        line = target.version_command
        key = (line, cwd, *sorted(f"{k}={v}" for k, v in target.env.items()))
        return _memoized(key, lambda: _run(line, cwd, target.env, lambda _: {}))
    return None


def target_auth(target: TargetSpec) -> AuthPlan | None:
    """Which auth an agent CLI target's runs use (or its problem and fix); None for targets that
    are not agent CLIs (a `cli` command brings its own)."""
    adapter = cli_adapter(target)
    if isinstance(target, AgentTarget) and adapter is not None:
        return adapter.auth(target)
    return None


def auth_problem(target: TargetSpec) -> str | None:
    """Why an agent CLI target cannot authenticate, with the fix; None when it can (or is no
    agent CLI). The case pipeline refuses all of the target's cases with it at once."""
    plan = target_auth(target)
    return plan.problem if plan else None


def _memoized(key: tuple[str, ...], probe: Callable[[], str | None]) -> str | None:
    with _guard:
        if key in _versions:
            return _versions[key]
        lock = _locks.setdefault(key, threading.Lock())
    # One probe per key even when many workers ask at once; other keys are not held up.
    with lock:
        if key not in _versions:
            _versions[key] = probe()
        return _versions[key]


def _run(
    command: str | list[str],
    cwd: str,
    env: dict[str, str],
    cli_env: Callable[[Path], dict[str, str]],
) -> str | None:
    with tempfile.TemporaryDirectory(prefix="evals-version-") as home:
        result = run_process(
            command,
            cwd=cwd if Path(cwd).is_dir() else home,
            env=child_env({"HOME": home, **cli_env(Path(home)), **env}),
            timeout_seconds=VERSION_TIMEOUT_SECONDS,
        )
    if result.error or result.timed_out or result.exit_code != 0:
        return None
    # pi prints its version on stderr; the others on stdout.
    text = result.stdout.decode(errors="replace").strip() or result.stderr
    lines = [line.strip() for line in text.splitlines()]
    found = next((line for line in lines if line), None)
    return found[:VERSION_MAX_CHARS] if found else None


def clear_version_cache() -> None:
    """Forget probed versions (a CLI upgraded under a long-lived process, and tests)."""
    with _guard:
        _versions.clear()
        _locks.clear()
