"""The real `evals-pipeline view` in a child process for tests, and plain http requests to it."""

from __future__ import annotations

import http.client
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

START_SECONDS = 60
STOP_SECONDS = 5


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


@dataclass
class Viewer:
    url: str
    process: subprocess.Popen[str]

    def get(self, path: str) -> Reply:
        """GET `path` sent as it is (no client-side normalization of `..` or `%2e`)."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            headers = {k.lower(): v for k, v in response.getheaders()}
            return Reply(response.status, headers, response.read())
        finally:
            conn.close()


@contextmanager
def running_view(
    storage: str | None,
    home: Path,
    env: dict[str, str] | None = None,
    stop: signal.Signals = signal.SIGTERM,
) -> Iterator[Viewer]:
    """`evals-pipeline view [--storage STORAGE] --port 0` in `home` until the block ends; then
    `stop` must end it, with exit code 0, within STOP_SECONDS."""
    options = ["--storage", storage] if storage else []
    process = subprocess.Popen(
        [sys.executable, "-m", "evals_pipeline.cli", "view", *options, "--port", "0"],
        cwd=home,
        env={**os.environ, "DAGSTER_HOME": str(home / "dagster"), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _first_line(process)
        found = re.search(r" at (http://127\.0\.0\.1:\d+)/ \(Ctrl-C to stop\)$", line)
        assert found, (
            f"no URL in the first line {line!r}: {process.stderr and process.stderr.read()}"
        )
        yield Viewer(found.group(1), process)
    finally:
        if process.poll() is None:
            started = time.monotonic()
            process.send_signal(stop)
            try:
                code = process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise AssertionError(
                    f"view did not end within {STOP_SECONDS} s of {stop.name}"
                ) from None
            _, errors = process.communicate()
            assert code == 0, f"exit {code} after {stop.name}: {errors}"
            assert time.monotonic() - started < STOP_SECONDS
            assert "Traceback" not in errors, errors


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=START_SECONDS):
            raise AssertionError(f"view printed nothing within {START_SECONDS} s")
    return process.stdout.readline().rstrip("\n")
