"""Child processes with an allowlisted environment and a timeout that kills the whole group.

Adapters (agents) and judges (code graders) both spawn through here, so the environment policy and
the kill-on-timeout rule live in one place.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# Variables a child may inherit. Everything else, API keys above all, stays in the parent.
ENV_ALLOWLIST: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "TMPDIR",
    "PYTHONIOENCODING",
    "SYSTEMROOT",
)

STDERR_LIMIT_CHARS = 64_000
KILL_GRACE_SECONDS = 2.0
GROUP_EXIT_WAIT_SECONDS = 2.0


def now_ms() -> int:
    """Wall-clock time in epoch milliseconds, the timestamp unit of every stored record."""
    return time.time_ns() // 1_000_000


def child_env(
    extra: Mapping[str, str] | None = None,
    *,
    allow: Iterable[str] = (),
    parent: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a child: allowlisted parent variables, then `extra`.

    The running interpreter's folder goes first on PATH so `python3` in a grader or agent command
    is the pipeline's own Python, which can import `evals_pipeline.grader`.
    """
    source = os.environ if parent is None else parent
    names = set(ENV_ALLOWLIST) | set(allow)
    env = {k: v for k, v in source.items() if k in names}
    bin_dir = str(Path(sys.executable).parent)
    path = env.get("PATH", os.defpath)
    if path.split(os.pathsep)[0] != bin_dir:
        env["PATH"] = os.pathsep.join([bin_dir, path])
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class ProcessResult:
    """How a child process ended; `error` is set when it could not start at all."""

    exit_code: int | None
    stdout: bytes
    stderr: str
    start_ms: int
    end_ms: int
    timed_out: bool = False
    error: str | None = None

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms


def killed_or_exited(code: int | None, *, shell: bool = False) -> str:
    """How a finished child ended, for an error: `killed by signal 9 (SIGKILL)` or `exited
    with code 3`. Popen reports a signal as a negative code; a shell reports its command's
    signal n as exit code 128 + n, so with `shell` such a code is named too."""
    if code is not None and code < 0:
        return f"killed by signal {-code}{_signal_name(-code)}"
    if shell and code is not None and 128 < code < 128 + signal.NSIG:
        return f"exited with code {code}: killed by signal {code - 128}{_signal_name(code - 128)}"
    return f"exited with code {code}"


def _signal_name(number: int) -> str:
    try:
        return f" ({signal.Signals(number).name})"
    except ValueError:
        return ""


class ProcessSpawner(Protocol):
    """How adapters start an agent; `run_process` is the default, and what the tests exercise."""

    def __call__(
        self,
        command: str | list[str],
        *,
        cwd: str | Path,
        env: Mapping[str, str],
        timeout_seconds: float,
        stdin: bytes | None = None,
        stdout_path: Path | None = None,
    ) -> ProcessResult: ...


def run_process(
    command: str | list[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    stdin: bytes | None = None,
    stdout_path: Path | None = None,
) -> ProcessResult:
    """Run `command` (argv, or a string for the shell) in its own process group.

    At the timeout the whole group gets SIGTERM, then SIGKILL after a short grace, so agents that
    fork children cannot outlive their run. With `stdout_path`, stdout streams to that file.
    """
    start = now_ms()
    shell = isinstance(command, str)
    stdout_target = open(stdout_path, "wb") if stdout_path else subprocess.PIPE  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            command,
            shell=shell,
            cwd=str(cwd),
            env=dict(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=stdout_target,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        if stdout_path:
            stdout_target.close()  # type: ignore[union-attr]
        name = command if shell else " ".join(command)
        return ProcessResult(None, b"", "", start, now_ms(), error=f"cannot start {name!r}: {exc}")
    timed_out = False
    try:
        out, err = proc.communicate(input=stdin, timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    finally:
        if stdout_path:
            stdout_target.close()  # type: ignore[union-attr]
        _kill_group(proc, signal.SIGKILL, grace=0)  # reap stragglers that left the leader behind
        _await_group_exit(proc.pid)
    stderr = (err or b"").decode("utf-8", "replace")[-STDERR_LIMIT_CHARS:]
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        stdout=out or b"",
        stderr=stderr,
        start_ms=start,
        end_ms=now_ms(),
        timed_out=timed_out,
    )


def _await_group_exit(pgid: int, limit_seconds: float = GROUP_EXIT_WAIT_SECONDS) -> None:
    """Return once no process of the group is left running, or after `limit_seconds`.

    A signal is delivered asynchronously: without this wait, a killed grandchild can still be
    running for a moment after we return, so the run would briefly outlive itself.
    """
    deadline = time.monotonic() + limit_seconds
    while _group_running(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_running(pgid: int) -> bool:
    """Whether any process of the group still runs; zombies awaiting their reaper do not count."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after its ")".
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def _kill_group(
    proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, grace: float = KILL_GRACE_SECONDS
) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
    if grace <= 0:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
