"""Whether bubblewrap can sandbox children here: found on PATH, not switched off, and able to
start a sandbox (probed once per process). Where it cannot, a warning says so once and children
run unsandboxed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading

from evals_pipeline.settings import Settings

SANDBOX_VAR = "EVALS_PIPELINE_SANDBOX"
OFF_VALUES = ("off", "0", "false", "no")
PROBE_SECONDS = 10.0

_lock = threading.Lock()
_probed: dict[str, str | None] = {}
_warned = False


def sandbox_disabled() -> bool:
    """Whether the user switched the sandbox off (EVALS_PIPELINE_SANDBOX=off)."""
    return (Settings.current().sandbox or "").strip().lower() in OFF_VALUES


def bubblewrap() -> str | None:
    """The path of a bwrap that works here, or None: not Linux, switched off, not installed, or
    unable to make its namespaces (a container without user namespaces, say)."""
    if sandbox_disabled():
        return None
    with _lock:
        if "bwrap" not in _probed:
            _probed["bwrap"] = _probe()
        return _probed["bwrap"]


def _probe() -> str | None:
    if not sys.platform.startswith("linux"):
        _warn_once("children run unsandboxed: the sandbox (bubblewrap) needs Linux")
        return None
    found = shutil.which("bwrap")
    if found is None:
        _warn_once(
            "children run unsandboxed: bubblewrap (bwrap) is not installed; install it "
            f"(`apt-get install bubblewrap`, or `make sandbox`), or set {SANDBOX_VAR}=off to "
            "silence this"
        )
        return None
    probe = [found, "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev"]
    probe += ["--proc", "/proc", "--tmpfs", "/tmp", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _warn_once(f"children run unsandboxed: bubblewrap cannot start ({exc})")
        return None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        _warn_once(
            f"children run unsandboxed: bubblewrap cannot make a sandbox here ({reason}); "
            f"allow unprivileged user namespaces, or set {SANDBOX_VAR}=off to silence this"
        )
        return None
    return found


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        # stderr: the terminal of a CLI run, a step's captured logs in Dagster (a logging call
        # too would print it twice where no handler is set).
        print(f"evals-pipeline: warning: {message}", file=sys.stderr)
