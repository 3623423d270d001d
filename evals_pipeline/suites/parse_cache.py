"""The data of large YAML files' parses, kept while their text is unchanged, so the commands and
the code location that read one suite file in turn parse it once (1.3 s for 10,000 tests; read
back in 0.1 s). Positions are not kept: only a problem to report needs them, and the text is then
parsed again (yaml_positions.py).

A parse is a pure function of the file's name, its text and the parser: the key hashes all three,
so an edited file (or another parser) is always parsed again. Kept in this process and, when the
Dagster instance's folder (DAGSTER_HOME, else `.evals/dagster`) exists, in a file per eval file
under it, which the next version of that file replaces.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from evals_pipeline.settings import Settings

MIN_CHARS = 256 * 1024
"""Smaller files parse in a few milliseconds: not worth a hash and a file."""
_FILES_IN_MEMORY = 8
_DEFAULT_INSTANCE = ".evals/dagster"  # the CLI's instance folder when DAGSTER_HOME is unset
_FOLDER = "parsed-suites"

Kept = tuple[Any]
"""A kept parse's data (in a tuple: the data itself may be None)."""

_lock = threading.Lock()
_memory: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # file -> its newest key, parse


def cache_key(text: str, file: str, parser: str) -> str:
    digest = hashlib.sha256(f"{parser}\0{file}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def load(key: str, file: str) -> Kept | None:
    """The parse stored under `key`, as new objects (the caller may change them); None if none."""
    with _lock:
        kept_key, blob = _memory.get(file, ("", b""))
        if kept_key == key:
            _memory.move_to_end(file)
    if kept_key != key:
        read = _read(key, file)
        if read is None:
            return None
        blob = read
        _remember(key, file, blob)
    try:
        return (marshal.loads(blob),)
    except (ValueError, EOFError, TypeError):  # a damaged file: parse again, and replace it
        return None


def store(key: str, file: str, data: Any) -> None:
    """Keep a parse's data; values marshal cannot write (a `!!timestamp`) leave it unkept."""
    try:
        blob = marshal.dumps(data)
    except ValueError:
        return
    _remember(key, file, blob)
    _write(file, key.encode() + b"\n" + blob)


def _remember(key: str, file: str, blob: bytes) -> None:
    """Keep the file's newest parse in memory (one per file: an edit replaces it)."""
    with _lock:
        _memory[file] = (key, blob)
        _memory.move_to_end(file)
        while len(_memory) > _FILES_IN_MEMORY:
            _memory.popitem(last=False)


def _path(file: str) -> Path | None:
    home = Path(Settings.current().dagster_home or _DEFAULT_INSTANCE)
    if not home.is_dir():
        return None  # no instance yet: a parse is no reason to make one
    name = hashlib.sha256(file.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return home / _FOLDER / f"{name}.marshal"


def _read(key: str, file: str) -> bytes | None:
    path = _path(file)
    if path is None:
        return None
    try:
        with path.open("rb") as handle:
            if handle.readline() != key.encode() + b"\n":
                return None  # another version of the file, or another parser
            return handle.read()
    except OSError:
        return None


def _write(file: str, blob: bytes) -> None:
    """Replace the file's kept parse whole (a reader sees the old one or the new one)."""
    path = _path(file)
    if path is None:
        return
    try:
        path.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    except OSError:
        return  # a read-only instance folder: the file is parsed again next time
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(blob)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
