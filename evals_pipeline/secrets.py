"""Which values are secret in a run, and scrubbing them from everything the pipeline stores.

API keys reach only the agent that needs them; whatever the agent then prints (its stream, its
session files, its stderr) is scrubbed before it is stored, so keys never land in transcripts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

REDACTED = "[REDACTED]"

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
"""Environment variable names whose values are treated as secrets."""

MIN_SECRET_CHARS = 8
"""Shorter values are not scrubbed: replacing "x" or "1" everywhere would garble transcripts."""


def secret_values(
    env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()
) -> list[str]:
    """Values of secret-looking variables in `env` (default: this process's), plus `extra`."""
    source = os.environ if env is None else env
    values = {v for k, v in source.items() if SECRET_NAME.search(k)}
    values.update(v for v in extra if v)
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


class Redactor:
    """Replaces each known secret with `[REDACTED]`; longest first, so no secret is half-hidden."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = [s for s in secrets if s]

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return value

    def file(self, path: Path) -> None:
        """Scrub a stored file in place (streams and session files are small text files)."""
        if not self.secrets or not path.is_file():
            return
        data = path.read_bytes()
        scrubbed = data
        for secret in self.secrets:
            scrubbed = scrubbed.replace(secret.encode(), REDACTED.encode())
        if scrubbed != data:
            path.write_bytes(scrubbed)
