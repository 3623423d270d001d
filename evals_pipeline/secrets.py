"""Which values are secret in a run, and scrubbing them from everything the pipeline stores.

API keys reach only the agent that needs them; whatever the agent then prints (its stream, its
session files, its stderr) is scrubbed before it is stored, so keys never land in transcripts.

Two kinds of secret values: those of secret-looking variables in the environment (8 characters
or more, so "1" or "x" do not garble every transcript), and those of secret-looking variables a
suite or targets file interpolates with `${{ VAR }}`, whatever their length: the suite put them
into prompts or commands, so they are the values most likely to be echoed back. Each is replaced
with `[REDACTED:VAR]`, which `restore` turns back into the value for the steps that must use it
(a stored case's command or grader key); a value known by no name becomes `[REDACTED]`. The
credentials inside any URL variable (a proxy's `user:password@`) are scrubbed too, unnamed: the
proxy and index variables pass to children, whose errors may print them.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from pydantic import BaseModel

REDACTED = "[REDACTED]"

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
"""Environment variable names whose values are treated as secrets."""

MIN_SECRET_CHARS = 8
"""Shorter environment values are not scrubbed: replacing "x" or "1" everywhere would garble
transcripts. Values a suite interpolates are scrubbed at any length."""

_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/?#@\s:]*)(?::([^/?#@\s]*))?@")
"""The `user[:password]@` of a URL (a proxy's, a package index's)."""

_MARKER = re.compile(r"\[REDACTED:([A-Za-z_][A-Za-z0-9_]*)\]")
_interpolated: dict[str, str] = {}
_lock = threading.Lock()

M = TypeVar("M", bound=BaseModel)


def is_secret_name(name: str) -> bool:
    """Whether a variable's name says its value is a secret (`*KEY*`, `*TOKEN*`, ...)."""
    return bool(SECRET_NAME.search(name))


def note_interpolated(name: str, value: str) -> None:
    """Remember that a suite interpolated `value` of variable `name` (kept when secret-looking).

    Process-wide: every process that loads the suite (the CLI, a code server, a run worker)
    notes its values again, so every process that stores something knows what to scrub.
    """
    if value and is_secret_name(name):
        with _lock:
            _interpolated[name] = value


def interpolated_secrets() -> dict[str, str]:
    """The secret-looking variables interpolated so far in this process, by name."""
    with _lock:
        return dict(_interpolated)


def url_credentials(env: Mapping[str, str]) -> set[str]:
    """The credentials inside URL values of `env`, whatever the variable's name: HTTPS_PROXY or
    PIP_INDEX_URL may be `http://user:password@host`, and they pass to children (process.py).

    `user:password` is scrubbed at any length (it is unmistakable); the password, or a token
    given as the user (`https://TOKEN@host`), alone only from MIN_SECRET_CHARS, as a variable's
    value is. Percent-encoded credentials are scrubbed as written and decoded.
    """
    found: set[str] = set()
    for value in env.values():
        if "://" not in value or "@" not in value:
            continue
        for match in _URL_USERINFO.finditer(value):
            user, password = match.group(1), match.group(2)
            secret = password if password else user
            for text in {secret, unquote(secret)}:
                if len(text) >= MIN_SECRET_CHARS:
                    found.add(text)
            if password:
                found.add(f"{user}:{password}")
    return found


def secret_values(
    env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()
) -> list[str]:
    """Values of secret-looking variables in `env` (default: this process's), plus `extra`, plus
    the credentials in its URLs."""
    source = os.environ if env is None else env
    values = {v for k, v in source.items() if is_secret_name(k)}
    values.update(v for v in extra if v)
    kept = {v for v in values if len(v) >= MIN_SECRET_CHARS} | url_credentials(source)
    return sorted(kept, key=len, reverse=True)


class Redactor:
    """Replaces each known secret with `[REDACTED]` (`[REDACTED:VAR]` for one a suite
    interpolated from VAR); longest first, so no secret is half-hidden."""

    def __init__(self, secrets: Iterable[str], named: Mapping[str, str] | None = None) -> None:
        pairs = {s: REDACTED for s in secrets if s}
        for name, value in (named or {}).items():
            if value:
                pairs[value] = f"[REDACTED:{name}]"
        self.replacements = sorted(pairs.items(), key=lambda p: len(p[0]), reverse=True)

    @property
    def secrets(self) -> list[str]:
        return [secret for secret, _ in self.replacements]

    def __bool__(self) -> bool:
        return bool(self.replacements)

    def text(self, value: str) -> str:
        for secret, marker in self.replacements:
            value = value.replace(secret, marker)
        return value

    def data(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings) with every string scrubbed."""
        if not self.replacements:  # nothing to hide: no walk through a large transcript
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(item) for item in value]
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        return value

    def holds_secret(self, text: str) -> bool:
        """Whether `text` (a JSON document's) holds a secret, as is or JSON string-escaped."""
        return any(secret in text for secret in self._searchable)

    def json(self, text: str) -> str:
        """A JSON document's text with its strings scrubbed (its keys and syntax left intact,
        so even a secret like "true" cannot break the document)."""
        if not self.holds_secret(text):
            return text
        return json.dumps(self.data(json.loads(text)), ensure_ascii=False)

    def model(self, record: M) -> M:
        """A pydantic record with every string field scrubbed."""
        if not self:
            return record
        text = record.model_dump_json()
        scrubbed = self.json(text)
        return record if scrubbed is text else type(record).model_validate_json(scrubbed)

    @functools.cached_property
    def _searchable(self) -> list[str]:
        """Each secret as it appears in text and inside a JSON string literal."""
        found = []
        for secret in self.secrets:
            found.append(secret)
            escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
            if escaped != secret:
                found.append(escaped)
        return found

    def file(self, path: Path) -> None:
        """Scrub a stored text file in place (streams and session files are small text files)."""
        if not self or not path.is_file():
            return
        data = path.read_bytes()
        scrubbed = data
        for secret, marker in self.replacements:
            scrubbed = scrubbed.replace(secret.encode(), marker.encode())
        if scrubbed != data:
            path.write_bytes(scrubbed)

    def tree(self, folder: Path, skip: Iterable[Path] = ()) -> None:
        """Scrub every file under `folder` in place, except under the `skip` folders (an agent's
        workspace is its work, graded as it left it)."""
        if not self or not folder.is_dir():
            return
        skipped = {p.resolve() for p in skip}
        for entry in folder.iterdir():
            if entry.resolve() in skipped or entry.is_symlink():
                continue
            if entry.is_dir():
                self.tree(entry, skipped)
            else:
                self.file(entry)


def run_redactor(extra: Iterable[str | None] = ()) -> Redactor:
    """The redactor for whatever this process stores: the environment's secrets and the values
    suites interpolated, each named after its variable (so `restore` can put it back), and
    `extra` (a run's own API key, from wherever it came)."""
    named = {
        k: v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS
    }
    unnamed = [*secret_values({}, extra=extra), *url_credentials(os.environ)]
    return Redactor(unnamed, {**named, **interpolated_secrets()})


def restore(text: str) -> str:
    """`text` (a stored case's JSON) with each `[REDACTED:VAR]` put back to VAR's value, JSON
    string-escaped; a marker whose variable this process does not know is left as it is."""
    known = interpolated_secrets()

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        found = known.get(name) or (os.environ.get(name) if is_secret_name(name) else None)
        return json.dumps(found, ensure_ascii=False)[1:-1] if found else match.group(0)

    return _MARKER.sub(value, text)
