"""Child processes with an allowlisted environment and a timeout that kills everything they
started.

Adapters (agents) and judges (code graders) both spawn through here, so the environment policy,
the OS sandbox (sandbox/) and the rule that no child outlives its call (reaping/) live in one
place.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from evals_pipeline.reaping.guard import ensure_guard
from evals_pipeline.reaping.killing import ChildTree
from evals_pipeline.reaping.ledger import forget_child, record_child
from evals_pipeline.reaping.owner import (
    OWNER_VAR,
    TOKEN_VAR,
    new_token,
    runner_marker,
    this_runner,
)
from evals_pipeline.reaping.prctl import (
    Launch,
    become_subreaper,
    become_undumpable,
    check_executable,
    dying_with_parent,
)
from evals_pipeline.sandbox.detection import bubblewrap
from evals_pipeline.sandbox.launch import sandboxed_argv
from evals_pipeline.sandbox.policy import SandboxPolicy
from evals_pipeline.stopping import stopping

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

# Behind a corporate proxy or a private CA, a grader installing its packages (bun, npx, uvx, pip)
# or an agent calling its API needs these: which CAs to trust, which proxy to go through, which
# package index to ask. They name places and files, not credentials; a proxy or index URL may
# hold `user:password@`, which the redactor scrubs from what is stored (secrets.url_credentials).
# Auth tokens (NPM_TOKEN, npm_config__authToken, UV_INDEX_*_PASSWORD) stay out, as every
# secret-looking name does.
_CA_ENV = (
    "SSL_CERT_FILE",  # OpenSSL: Python's ssl, curl, git, uv with native TLS
    "SSL_CERT_DIR",
    "NIX_SSL_CERT_FILE",  # OpenSSL as Nix builds it
    "REQUESTS_CA_BUNDLE",  # requests, pip
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",  # node, bun, npm
    "PIP_CERT",
    "UV_NATIVE_TLS",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "CARGO_HTTP_CAINFO",
    "DENO_CERT",
    "AWS_CA_BUNDLE",
)
_PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")  # curl reads them lower-case
_INDEX_ENV = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "BUN_CONFIG_REGISTRY",
    "YARN_NPM_REGISTRY_SERVER",
    "GOPROXY",
    "GONOSUMDB",
    "GOPRIVATE",
    # Where there is no index at all: installs come from a cache or local files, or fail.
    "UV_OFFLINE",
    "UV_PYTHON_DOWNLOADS",
    "UV_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_FIND_LINKS",
)
# npm reads its `npm_config_*` variables in either case.
_NPM_ENV = ("registry", "cafile", "ca", "strict_ssl", "proxy", "https_proxy", "noproxy")
NETWORK_ENV: tuple[str, ...] = (
    *_CA_ENV,
    *_PROXY_ENV,
    *(name.lower() for name in _PROXY_ENV),
    *_INDEX_ENV,
    *(f"npm_config_{key}" for key in _NPM_ENV),
    *(f"NPM_CONFIG_{key.upper()}" for key in _NPM_ENV),
)

STDERR_LIMIT_CHARS = 64_000
KILL_GRACE_SECONDS = 2.0
STOP_GRACE_SECONDS = 1.0  # after a stop (stopping.py): the run is to end within a few seconds
STOPPED_ERROR = "stopped: the run was interrupted"
# After the leader exits and its leftovers are killed, pipes they held are read this long at most.
DRAIN_SECONDS = 2.0
POLL_SECONDS = 0.05
LOOK_SECONDS = 1.0  # how often the tree is scanned while the leader runs
# The first scan waits: most children (git, graders) are done sooner, and what a quick one leaves
# behind is still found by its session, group or marker once it exits.
FIRST_LOOK_SECONDS = 0.2
READ_CHUNK = 65_536


def now_ms() -> int:
    """Wall-clock time in epoch milliseconds, the timestamp unit of every stored record."""
    return time.time_ns() // 1_000_000


def child_env(
    extra: Mapping[str, str] | None = None,
    *,
    allow: Iterable[str] = (),
    parent: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a child: allowlisted parent variables (ENV_ALLOWLIST, NETWORK_ENV
    and `allow`), then `extra`.

    The running interpreter's folder goes first on PATH so `python3` in a grader or agent command
    is the pipeline's own Python, which can import `evals_pipeline.grader`.
    """
    source = os.environ if parent is None else parent
    names = set(ENV_ALLOWLIST) | set(NETWORK_ENV) | set(allow)
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


# A line that says what went wrong: `error: Cannot find module` (bun), `Error: ...` (node),
# `ModuleNotFoundError: ...` (Python), `fatal: ...` (git), `panic: ...` (Go).
_ERROR_LINE = re.compile(
    r"^(?:\S*(?:error|exception)\b|fatal\b|panic\b|uncaught\b|cannot\b|could not\b)",
    re.IGNORECASE,
)
REASON_LINES = 3
"""At most this many error lines go into a failure's reason, besides stderr's last line."""
REASON_LINE_CHARS = 300


def stderr_reason(stderr: str) -> str:
    """The lines of a failed child's stderr that say what went wrong, on one line: its first
    error lines and its last line. The last line alone is often a banner (bun ends every crash
    with `Bun v1.4.5 (Linux x64)`, node with `Node.js v22`), the error sits above it, and a
    stack trace in between says nothing a reader needs in the one-line reason."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    errors = [line for line in lines if _ERROR_LINE.match(line)][:REASON_LINES]
    picked = list(dict.fromkeys([*errors, lines[-1]]))
    return " | ".join(_cut(line) for line in picked)


def _cut(line: str) -> str:
    return line if len(line) <= REASON_LINE_CHARS else line[:REASON_LINE_CHARS] + "…"


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
        sandbox: SandboxPolicy | None = None,
    ) -> ProcessResult: ...


def run_process(
    command: str | list[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    stdin: bytes | None = None,
    stdout_path: Path | None = None,
    sandbox: SandboxPolicy | None = None,
) -> ProcessResult:
    """Run `command` (argv, or a string for the shell) in its own session; nothing it starts
    outlives the call.

    With `sandbox` (agents and graders), it runs under bubblewrap with that policy where
    bubblewrap works (sandbox/detection.py). A child that runs unsandboxed makes the runner
    non-dumpable first, so it cannot read the runner's environment through /proc.

    The child carries a unique marker in its environment that its descendants inherit. At the
    timeout its group and every marked process get SIGTERM, then SIGKILL after a short grace;
    when it exits, whatever it left behind (setsid escapees included) gets SIGKILL and we stop
    reading pipes they held. If the runner dies, the child gets its parent-death signal and the
    runner's guard process kills the rest; the child is also recorded, so the next start sweeps
    whatever a guard could not (reaping/).
    With `stdout_path`, stdout streams to that file.
    """
    start = now_ms()
    name = command if isinstance(command, str) else " ".join(command)
    if stopping():  # the run was interrupted: nothing new starts
        return ProcessResult(
            None, b"", "", start, start, error=f"{STOPPED_ERROR}; {name!r} not started"
        )
    token = new_token()
    become_subreaper()
    runner = this_runner()
    ensure_guard(runner)
    marked = {**env, TOKEN_VAR: token, OWNER_VAR: runner_marker()}
    stdout_target = open(stdout_path, "wb") if stdout_path else subprocess.PIPE  # noqa: SIM115
    try:
        wrapped = _sandboxed(command, cwd, marked, sandbox)
        launch = _dying_with_parent(command, wrapped, cwd, marked)
        proc = subprocess.Popen(
            launch.argv,
            cwd=str(cwd),
            env=marked,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=stdout_target,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=launch.preexec_fn,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if stdout_path:
            stdout_target.close()  # type: ignore[union-attr]
        return ProcessResult(None, b"", "", start, now_ms(), error=f"cannot start {name!r}: {exc}")
    try:
        sandboxed = wrapped is not command
        timed_out, streams = _supervise(proc, token, name, stdin, timeout_seconds, sandboxed)
    finally:
        if stdout_path:
            stdout_target.close()  # type: ignore[union-attr]
    stderr = bytes(streams.stderr).decode("utf-8", "replace")[-STDERR_LIMIT_CHARS:]
    code = proc.returncode
    if wrapped is not command:
        code = _signal_through_bwrap(code)
    return ProcessResult(
        exit_code=None if timed_out else code,
        stdout=bytes(streams.stdout),
        stderr=stderr,
        start_ms=start,
        end_ms=now_ms(),
        timed_out=timed_out,
    )


def _supervise(
    proc: subprocess.Popen[bytes],
    token: str,
    name: str,
    stdin: bytes | None,
    timeout_seconds: float,
    sandboxed: bool,
) -> tuple[bool, _Streams]:
    """Record the started child, feed and read it until its leader exits or the timeout, then kill
    whatever it left behind; whatever happens, nothing of it is left running or recorded.
    A `sandboxed` tree is not looked at while its leader runs: nothing leaves the sandbox's PID
    namespace, which dies with the leader (bubblewrap's --die-with-parent), and its init, in the
    leader's session, ends last.
    Returns whether it timed out, and its streams."""
    tree = ChildTree(proc.pid, token)
    record = record_child(proc.pid, token, name, tree.since_ticks or None)
    with _live_lock:
        _live[proc.pid] = (proc, tree)
    streams = _Streams(proc, stdin)
    left_behind: bool | None = None
    try:
        timed_out = _await_leader(proc, tree, streams, timeout_seconds, look=not sandboxed)
        # The leader is gone: what it left behind goes too, so pipes they hold reach EOF. Its
        # group is signalled too: the leader was reaped a moment ago, too soon for its pid (the
        # group's id) to be reused.
        left_behind = not tree.settled(tree.signal(signal.SIGKILL, leader_alive=False, group=True))
        streams.drain(DRAIN_SECONDS)
    finally:
        streams.close()
        if proc.returncode is None:
            tree.signal(signal.SIGKILL, leader_alive=True)
            proc.kill()
            proc.wait()
        # With no member left running once the leader exited, nothing remains that could start
        # one: the usual case costs one scan of /proc.
        if left_behind is not False:
            tree.end()
        forget_child(record)
        with _live_lock:
            _live.pop(proc.pid, None)
    return timed_out, streams


_live: dict[int, tuple[subprocess.Popen[bytes], ChildTree]] = {}
_live_lock = threading.Lock()


def live_children() -> int:
    """How many `run_process` calls have a child running now."""
    with _live_lock:
        return len(_live)


def kill_live_children() -> None:
    """SIGKILL every child `run_process` runs now, with all it started: the hard end of a run
    (a second Ctrl-C, or children that outlast the stop's grace)."""
    with _live_lock:
        live = list(_live.values())
    for proc, tree in live:
        if proc.poll() is None:  # unreaped: its pid still names its group
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        # The call's own thread may walk the same tree meanwhile: a clash only skips a member
        # that the reaping guard ends once this process has gone.
        with contextlib.suppress(Exception):
            tree.signal(signal.SIGKILL, leader_alive=False)


def _sandboxed(
    command: str | list[str], cwd: str | Path, env: dict[str, str], sandbox: SandboxPolicy | None
) -> str | list[str]:
    """`command` wrapped in bubblewrap when `sandbox` is set and bubblewrap works; else
    `command` as is, with the runner made non-dumpable first."""
    bwrap = bubblewrap() if sandbox is not None else None
    if sandbox is None or bwrap is None:
        become_undumpable()
        return command
    if not isinstance(command, str):
        # A missing program stays an OSError, as Popen would raise it, not bwrap's exit 1.
        check_executable(command[0], cwd, env)
    return sandboxed_argv(bwrap, command, Path(cwd), env, sandbox)


def _dying_with_parent(
    command: str | list[str], wrapped: str | list[str], cwd: str | Path, env: dict[str, str]
) -> Launch:
    """The launch of `wrapped` that dies with this process. bubblewrap's `--die-with-parent`
    (bubblewrap.py) gives bwrap and the sandbox's init and command SIGKILL when their parent
    dies, and the sandbox's PID namespace takes the rest: no setpriv in front of it, one exec
    less per child. bwrap sets it a few ms after its start, as setpriv did after its own; a
    runner killed in that moment leaves the sandbox to its guard (reaping/guard.py)."""
    if wrapped is not command:
        return Launch(list(wrapped), None)
    return dying_with_parent(wrapped, cwd=cwd, env=env)


def _signal_through_bwrap(code: int | None) -> int | None:
    """Popen's code for a child bubblewrap ran: bubblewrap exits 128 + n when its child was
    killed by signal n, which Popen reports as -n for a child it ran itself."""
    if code is not None and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code


def _await_leader(
    proc: subprocess.Popen[bytes],
    tree: ChildTree,
    streams: _Streams,
    timeout_seconds: float,
    *,
    look: bool,
) -> bool:
    """Pump the pipes until the leader exits, with a `look` at the tree now and then; at the
    timeout, or when the run is stopped (stopping.py), end the tree (SIGTERM, then SIGKILL after
    the grace). Whether it timed out."""
    deadline = time.monotonic() + timeout_seconds
    next_look = time.monotonic() + FIRST_LOOK_SECONDS
    while proc.poll() is None:
        now = time.monotonic()
        stopped = stopping()
        if now >= deadline or stopped:
            tree.signal(signal.SIGTERM, leader_alive=True)
            grace_end = now + (STOP_GRACE_SECONDS if stopped else KILL_GRACE_SECONDS)
            while proc.poll() is None and time.monotonic() < grace_end:
                streams.pump(min(POLL_SECONDS, grace_end - time.monotonic()))
            if proc.returncode is None:
                tree.signal(signal.SIGKILL, leader_alive=True)
                proc.kill()
                proc.wait()
            return not stopped
        if now >= next_look:  # remember members while the tree links them to the leader
            if look:
                tree.members(leader_alive=True)
            else:
                tree.newer.note()  # no scan: only the kernel's last pid, to see a wrap
            next_look = now + LOOK_SECONDS
        streams.pump(min(POLL_SECONDS, deadline - now))
    return False


class _Streams:
    """The child's stdin, stdout and stderr pipes, served without blocking: reading stops
    when we say, even if a process we could not end still holds a pipe open."""

    def __init__(self, proc: subprocess.Popen[bytes], stdin: bytes | None) -> None:
        self.proc = proc
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.selector = selectors.DefaultSelector()
        self.input = memoryview(stdin or b"")
        self.offset = 0
        for pipe, sink in ((proc.stdout, self.stdout), (proc.stderr, self.stderr)):
            if pipe is not None:
                self.selector.register(pipe, selectors.EVENT_READ, sink)
        if proc.stdin is not None:
            if self.input:
                self.selector.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                self._close(proc.stdin)

    def pump(self, wait_seconds: float) -> None:
        """Move what is ready within `wait_seconds`; with no pipe left open, wait for the leader."""
        if not self.selector.get_map():
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=max(0.0, wait_seconds))
            return
        for key, _ in self.selector.select(max(0.0, wait_seconds)):
            if key.data is None:
                self._write(key.fileobj)  # type: ignore[arg-type]
                continue
            chunk = os.read(key.fd, READ_CHUNK)
            if chunk:
                key.data.extend(chunk)
            else:
                self._close(key.fileobj)  # type: ignore[arg-type]

    def drain(self, limit_seconds: float) -> None:
        """Read until every pipe ends, or `limit_seconds` pass."""
        deadline = time.monotonic() + limit_seconds
        while any(k.data is not None for k in self.selector.get_map().values()):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.pump(min(POLL_SECONDS, left))

    def close(self) -> None:
        for key in list(self.selector.get_map().values()):
            self._close(key.fileobj)  # type: ignore[arg-type]
        self.selector.close()

    def _write(self, pipe: IO[bytes]) -> None:
        chunk = self.input[self.offset : self.offset + select.PIPE_BUF]
        try:
            self.offset += os.write(pipe.fileno(), chunk)
        except BrokenPipeError:  # the child stopped reading: not our failure
            self.offset = len(self.input)
        if self.offset >= len(self.input):
            self._close(pipe)

    def _close(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(pipe)
        with contextlib.suppress(OSError):
            pipe.close()
