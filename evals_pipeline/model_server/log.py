"""The request log: every request and reply as one JSON line, with credentials redacted.

An unhandled path, or a turn index that skips, is the first sign a CLI changed its wire behaviour.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from evals_pipeline.secrets import run_redactor

REDACTED = "[redacted]"
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers (lower-cased names) with API keys, tokens and cookies replaced by `[redacted]`."""
    redacted: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        secret = (
            key in _SECRET_HEADERS
            or "api-key" in key
            or "api_key" in key
            or key.endswith(("-token", "-secret"))
        )
        redacted[key] = REDACTED if secret else value
    return redacted


class RequestLog:
    """Appends JSONL entries to a file (if given) and a one-line summary to `echo` (if given)."""

    def __init__(self, path: Path | None = None, echo: TextIO | None = None) -> None:
        self._lock = threading.Lock()
        self._echo = echo
        self._file: TextIO | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")

    def write(self, event: str, summary: str | None = None, **fields: Any) -> None:
        """Record one event (`request`, `reply`, `unhandled`, …); safe from any thread."""
        entry = {"ts": round(time.time(), 3), "event": event, **fields}
        # Prompts carry whatever a suite interpolated into them: scrubbed like every stored file.
        line = run_redactor().json(json.dumps(entry, ensure_ascii=False, default=str))
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()
            if self._echo is not None and summary is not None:
                print(summary, file=self._echo, flush=True)

    def close(self) -> None:
        """Close the log file; later writes only echo."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
