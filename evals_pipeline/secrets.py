"""Which values are secret in a run, and scrubbing them from everything the pipeline stores.

API keys reach only the agent that needs them; whatever the agent then prints (its stream, its
session files, its stderr) is scrubbed before it is stored, so keys never land in transcripts.

Secret values: every value a suite or targets file interpolates with `${{ VAR }}`, whatever
the variable's name (DB_PASS too), unless the file lists VAR in `public_env:`; the values of
secret-looking variables in the environment (`*KEY*`, `*TOKEN*`, ...); a child's credentials
(a run's API key); and the credentials inside URL variables (a proxy's `user:password@`, which
children's errors may print). Each is replaced in every form it is likely to be printed in
(`secret_forms`: raw, JSON-escaped, URL-encoded, base64, hex, and each half of a long one) by
`[REDACTED:VAR]`, or `[REDACTED]` for a value known by no name.

A stored case needs its interpolated values back (its command, a grader's key): `json_slots`
records where, by position, it replaced each one, and `restore_slots` puts the value back at
exactly those positions. Nothing is restored by reading markers in text: a `[REDACTED:VAR]`
written in a suite, a dataset or an attached file stays that text.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus, unquote

from pydantic import BaseModel

REDACTED = "[REDACTED]"

SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(?:^|_)PASS(?:_|$))", re.IGNORECASE
)
"""Environment variable names whose values are treated as secrets even when no suite
interpolates them."""

MIN_SECRET_CHARS = 8
"""Shorter values of secret-looking environment variables that no suite interpolates are not
scrubbed: replacing "x" or "1" everywhere would garble transcripts."""

MIN_INTERPOLATED_CHARS = 4
"""Values a suite interpolates (or a child gets as a credential) are scrubbed from this length:
the suite put them into prompts or commands, so they are the values most likely to be echoed
back. A value of 1-3 characters ("1", "true", "eu") is not scrubbed: it would replace every
such word of every transcript, and hiding it protects nothing (it is guessed in a few thousand
tries)."""

MIN_FORM_CHARS = 6
"""An encoded form (base64, hex) or a half shorter than this is not scrubbed: it would match
inside unrelated encoded data (an image's base64) and break it."""

_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/?#@\s:]*)(?::([^/?#@\s]*))?@")
"""The `user[:password]@` of a URL (a proxy's, a package index's)."""

_SETTING = re.compile(r"^(?:true|false|yes|no|-?\d+(?:\.\d+)?)$", re.IGNORECASE)
"""A boolean or a number: what a variable that is a setting holds (a count, a port, a switch)."""

_PERCENT = re.compile(r"%[0-9A-F]{2}")
_interpolated: dict[str, str] = {}
_env_files: set[str] = set()
_lock = threading.Lock()

M = TypeVar("M", bound=BaseModel)

Slot = tuple[list[str | int], int, str, str]
"""Where a stored record's text had a named secret: (path of the string in the record, offset
of the marker in the scrubbed string, variable, form)."""


def is_secret_name(name: str) -> bool:
    """Whether a variable's name says its value is a secret (`*KEY*`, `*TOKEN*`, ...)."""
    return bool(SECRET_NAME.search(name))


def note_interpolated(name: str, value: str, public: Collection[str] = ()) -> None:
    """Remember that a suite interpolated `value` of variable `name`: a secret unless the suite
    lists `name` in `public` (its `public_env:`), the value is too short to hide, or it is a
    boolean or a number of a variable whose name does not look secret (DB_PASS=12345 is secret,
    PORT=8080 is not: scrubbing every "8080" and "true" would garble every transcript).

    Process-wide: every process that loads the suite (the CLI, a code server, a run worker)
    notes its values again, so every process that stores something knows what to scrub. A
    value one file marks public and another does not is secret.
    """
    if len(value) < MIN_INTERPOLATED_CHARS or name in public:
        return
    if _SETTING.match(value) and not is_secret_name(name):
        return  # `${{ RETRIES }}` = 1000, `${{ STREAM }}` = true: a setting, not a secret
    with _lock:
        _interpolated[name] = value


def note_env_file(path: Path) -> None:
    """Remember that this process read variables from the `.env` file `path`: it holds keys the
    runner withholds from its children, so the sandbox hides it from them."""
    with _lock:
        _env_files.add(str(path))


def env_files() -> list[str]:
    """The `.env` files read so far in this process."""
    with _lock:
        return sorted(_env_files)


def interpolated_secrets() -> dict[str, str]:
    """The variables interpolated so far in this process and treated as secret, by name."""
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
    """Values of secret-looking variables in `env` (default: this process's) from
    MIN_SECRET_CHARS, plus `extra` (credentials a child gets) from MIN_INTERPOLATED_CHARS, plus
    the credentials in its URLs."""
    source = os.environ if env is None else env
    kept = {v for k, v in source.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS}
    kept.update(v for v in extra if v and len(v) >= MIN_INTERPOLATED_CHARS)
    kept |= url_credentials(source)
    return sorted(kept, key=len, reverse=True)


def _base64_at(offset: int, alphabet: Callable[[bytes], bytes]) -> Callable[[str], str]:
    """The base64 characters that encode only the secret's bytes when it starts `offset` bytes
    into a longer blob: what any base64 holding the secret at that alignment contains."""

    def form(secret: str) -> str:
        data = secret.encode()
        encoded = alphabet(bytes(offset) + data).decode()
        return encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6]

    return form


def _lower_escapes(text: str) -> str:
    return _PERCENT.sub(lambda m: m.group(0).lower(), text)


def _half(first: bool) -> Callable[[str], str]:
    def form(secret: str) -> str:
        if len(secret) < 2 * MIN_FORM_CHARS:
            return ""
        middle = len(secret) // 2
        return secret[:middle] if first else secret[middle:]

    return form


FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "json": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "json_ascii": lambda s: json.dumps(s)[1:-1],
    "url": lambda s: quote(s, safe=""),
    "url_path": lambda s: quote(s),
    "url_plus": quote_plus,
    "url_lower": lambda s: _lower_escapes(quote(s, safe="")),
    "url_plus_lower": lambda s: _lower_escapes(quote_plus(s)),
    "hex": lambda s: s.encode().hex(),
    "hex_upper": lambda s: s.encode().hex().upper(),
    **{f"base64_{k}": _base64_at(k, base64.standard_b64encode) for k in range(3)},
    **{f"base64url_{k}": _base64_at(k, base64.urlsafe_b64encode) for k in range(3)},
    # A secret cut at a line end (a terminal's wrap, `base64`'s 76 columns) leaves a half of it
    # whole on one side of the cut: each half is scrubbed, so less than half ever shows.
    "head": _half(first=True),
    "tail": _half(first=False),
    "json_head": lambda s: json.dumps(_half(True)(s), ensure_ascii=False)[1:-1],
    "json_tail": lambda s: json.dumps(_half(False)(s), ensure_ascii=False)[1:-1],
}
"""How a secret may appear in what a child prints or a file holds, by form name (the stored
slots name them, so the names stay)."""

_EXACT_FORMS = frozenset({"raw", "json", "json_ascii", "url", "url_path", "url_plus"})
"""Forms that are scrubbed whatever their length; the others (encodings, halves) only from
MIN_FORM_CHARS."""


def secret_forms(secret: str) -> dict[str, str]:
    """Each distinct text `secret` takes in its forms (FORMS), with the first form giving it."""
    found: dict[str, str] = {}
    for name, form in FORMS.items():
        text = form(secret)
        if text and (name in _EXACT_FORMS or len(text) >= MIN_FORM_CHARS):
            found.setdefault(text, name)
    return found


class Redactor:
    """Replaces each known secret, in each of its forms, with `[REDACTED]` (`[REDACTED:VAR]`
    for one known as VAR); in one pass, longest form first, so no secret is half-hidden."""

    def __init__(self, secrets: Iterable[str], named: Mapping[str, str] | None = None) -> None:
        labels: dict[str, str | None] = {s: None for s in secrets if s}
        for name, value in (named or {}).items():
            if value:
                labels[value] = name
        # text -> (marker, variable or None, form); a longer secret's form wins a shared text.
        forms: dict[str, tuple[str, str | None, str]] = {}
        for secret in sorted(labels, key=len, reverse=True):
            label = labels[secret]
            marker = f"[REDACTED:{label}]" if label else REDACTED
            for text, form in secret_forms(secret).items():
                forms.setdefault(text, (marker, label, form))
        self._forms = dict(sorted(forms.items(), key=lambda p: len(p[0]), reverse=True))
        self.secrets = sorted(labels, key=len, reverse=True)
        self._patterns: dict[tuple[str, ...], re.Pattern[str]] = {}

    def __bool__(self) -> bool:
        return bool(self._forms)

    def _present(self, text: str) -> list[str]:
        # A substring search per form is ~20x faster than one regex of them all (Python's re
        # tries every alternative at every position); most texts hold none.
        if none_present(text, self._forms):
            return []
        return [form for form in self._forms if form in text]

    def _pattern(self, present: tuple[str, ...]) -> re.Pattern[str]:
        pattern = self._patterns.get(present)
        if pattern is None:
            pattern = self._patterns[present] = re.compile("|".join(map(re.escape, present)))
        return pattern

    def _scrub(self, value: str, found: list[Slot] | None, path: list[str | int]) -> str:
        present = self._present(value)
        if not present:
            return value
        shift = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal shift
            marker, name, form = self._forms[match.group(0)]
            if found is not None and name is not None:
                found.append((list(path), match.start() + shift, name, form))
            shift += len(marker) - len(match.group(0))
            return marker

        return self._pattern(tuple(present)).sub(replace, value)

    def text(self, value: str) -> str:
        return self._scrub(value, None, [])

    def data(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings) with every string scrubbed."""
        if not self._forms:  # nothing to hide: no walk through a large transcript
            return value
        if isinstance(value, (list, dict)):
            # One search per form through the whole text is ~3x faster than per string, and a
            # transcript mostly holds none.
            text = json.dumps(value, ensure_ascii=False, default=str)
            if not self.holds_secret(text):
                return value
        return self._walk(value, None, [])

    def _walk(self, value: Any, found: list[Slot] | None, path: list[str | int]) -> Any:
        if isinstance(value, str):
            return self._scrub(value, found, path)
        if isinstance(value, list):
            return [self._walk(item, found, [*path, i]) for i, item in enumerate(value)]
        if isinstance(value, dict):
            return {key: self._walk(item, found, [*path, key]) for key, item in value.items()}
        return value

    def holds_secret(self, text: str) -> bool:
        """Whether `text` (a JSON document's) holds a secret in any of its forms (as is or
        JSON string-escaped among them)."""
        return not none_present(text, self._forms) and any(form in text for form in self._forms)

    def json(self, text: str) -> str:
        """A JSON document's text with its strings scrubbed (its keys and syntax left intact,
        so even a secret like "true" cannot break the document)."""
        return self.json_slots(text)[0]

    def json_slots(self, text: str) -> tuple[str, list[Slot]]:
        """`json(text)`, and where in its strings each named secret was replaced (for
        `restore_slots`)."""
        if not self.holds_secret(text):
            return text, []
        found: list[Slot] = []
        scrubbed = self._walk(json.loads(text), found, [])
        return json.dumps(scrubbed, ensure_ascii=False), found

    def model(self, record: M) -> M:
        """A pydantic record with every string field scrubbed but its names and paths
        (`UNREDACTED`, models/stored.py)."""
        if not self:
            return record
        text = record.model_dump_json()
        scrubbed = self.json(text)
        if scrubbed is text:
            return record
        kept = getattr(type(record), "UNREDACTED", ())  # names and paths (models/stored.py)
        fields = type(record).model_fields
        return (
            type(record)
            .model_validate_json(scrubbed)
            .model_copy(update={name: getattr(record, name) for name in kept if name in fields})
        )

    def scrub_bytes(self, data: bytes) -> bytes:
        """Raw bytes (a file's) with every form of every secret replaced."""
        if none_present(data, self._forms):
            return data
        present = [form for form in self._forms if form.encode() in data]
        if not present:
            return data
        markers = {form.encode(): self._forms[form][0].encode() for form in present}
        pattern = re.compile(b"|".join(re.escape(form) for form in markers))
        return pattern.sub(lambda m: markers[m.group(0)], data)

    def file(self, path: Path) -> None:
        """Scrub a stored text file in place (streams and session files are small text files)."""
        if not self or not path.is_file():
            return
        data = path.read_bytes()
        scrubbed = self.scrub_bytes(data)
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


LONG_TEXT = 64 * 1024
"""From this many characters (or bytes) a text is first searched for every form at once."""
_RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")


def none_present(data: str | bytes, forms: Collection[str]) -> bool:
    """True when the long `data` surely holds none of `forms`: one pass of RE2 (in Arrow) over
    it for all of them at once, ~15 ms for 10 MB, where a search per form costs ~5 ms each (a
    few secrets take ~20 forms each). False for short data, or when RE2 cannot tell."""
    if len(data) < LONG_TEXT or not forms:
        return False
    import pyarrow as pa  # loaded already where long texts are scanned (the transcripts)
    import pyarrow.compute as pc

    try:
        raw = data.encode() if isinstance(data, str) else data
        # One binary value over the bytes as they are (pa.array would import pandas).
        offsets = pa.py_buffer((0).to_bytes(4, "little") + len(raw).to_bytes(4, "little"))
        value = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, pa.py_buffer(raw)])
        found = pc.match_substring_regex(value, pattern=_any_of(tuple(forms)))
    except (pa.ArrowException, OverflowError, UnicodeError):
        return False  # over 2 GB, a lone surrogate, a pattern RE2 refuses: searched form by form
    return found[0].as_py() is False


@functools.lru_cache(maxsize=64)
def _any_of(forms: tuple[str, ...]) -> str:
    """An RE2 pattern matching any of `forms` literally."""
    return "|".join("".join(map(_re2_literal, form)) for form in forms)


def _re2_literal(char: str) -> str:
    if char in _RE2_SPECIAL:
        return "\\" + char
    return char if char >= " " else f"\\x{{{ord(char):x}}}"


def run_redactor(extra: Iterable[str | None] = ()) -> Redactor:
    """The redactor for whatever this process stores or prints: the environment's secrets and
    the values suites interpolated, each named after its variable (so a stored case's slots can
    put it back), and `extra` (a run's own API key, from wherever it came)."""
    named = {
        k: v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS
    }
    unnamed = [*secret_values({}, extra=extra), *url_credentials(os.environ)]
    names = {**named, **interpolated_secrets()}
    return _redactor(tuple(sorted(set(unnamed))), tuple(sorted(names.items())))


@functools.lru_cache(maxsize=64)
def _redactor(unnamed: tuple[str, ...], named: tuple[tuple[str, str], ...]) -> Redactor:
    # Built once per set of secrets: every stored record and log line asks for one, and each
    # secret takes ~20 forms to compute.
    return Redactor(unnamed, dict(named))


def restore_slots(data: Any, slots: Iterable[Slot]) -> None:
    """Put back, in place, the secret each slot of a stored record names (`json_slots`), in
    the form it had; a slot whose variable this process does not know keeps its marker, as does
    one whose string no longer holds the marker there."""
    known = interpolated_secrets()
    # From the end of each string, so the offsets of the slots before stay true.
    for path, offset, name, form in sorted(slots, key=lambda s: s[1], reverse=True):
        value = known.get(name, os.environ.get(name))
        if value is None or not path or form not in FORMS:
            continue
        holder = data
        try:
            for step in path[:-1]:
                holder = holder[step]
            text = holder[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        marker = f"[REDACTED:{name}]"
        if isinstance(text, str) and text[offset : offset + len(marker)] == marker:
            holder[path[-1]] = text[:offset] + FORMS[form](value) + text[offset + len(marker) :]
