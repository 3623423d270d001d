"""A suite's fingerprint: one hash of everything that decides what its cases do and how they are
graded (the eval file, its targets file, each resolved case, and the files and folders those
name: input files, grader scripts, workspace templates, hooks). The Dagster layer uses it as the
assets' code version, so a changed suite or grader marks their partitions stale."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals_pipeline.suites.loader import LoadedSuite
from evals_pipeline.suites.resolve import resolve_cases

SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
MAX_FOLDER_FILES = 2000
"""A named folder hashes at most this many files (its paths sorted): a huge template or
repository checkout must not slow the code location's load."""
_MAX_PATH_LENGTH = 1024
_MAX_COMMAND_WORDS = 8  # a command line's words are looked up one by one; prose is not


def suite_fingerprint(loaded: LoadedSuite) -> str:
    """16 hex digits that change when the suite file, a file it references or a grader changes."""
    digest = hashlib.sha256()
    cases = resolve_cases(loaded)
    files = {loaded.path, *([loaded.targets_file] if loaded.targets_file else [])}
    for case in cases:
        digest.update(case.content_hash.encode())
        base = Path(case.base_dir)
        files.update(_named_paths(case.model_dump(mode="json"), base))
    for path in sorted(files):
        _add_path(digest, path)
    return digest.hexdigest()[:16]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _named_paths(dumped: Any, base: Path) -> set[Path]:
    """Existing files that strings in a case name, absolute or from its folder (a grader
    command's script, an input file), and folders under its folder (a workspace template)."""
    found: set[Path] = set()
    base = base.resolve()
    for text in _strings(dumped):
        if not text or len(text) > _MAX_PATH_LENGTH or "\n" in text or "\0" in text:
            continue
        words = text.split()
        for word in words if 1 < len(words) <= _MAX_COMMAND_WORDS else [text]:
            path = Path(word) if os.path.isabs(word) else base / word
            try:
                if path.is_file() or (path.is_dir() and base in path.resolve().parents):
                    found.add(path.resolve())
            except OSError:
                continue
    return found


def _add_path(digest: Any, path: Path) -> None:
    digest.update(str(path).encode())
    if path.is_file():
        digest.update(_file_hash(path))
        return
    files = sorted(_walk(path))[:MAX_FOLDER_FILES]
    for file in files:
        digest.update(str(file.relative_to(path)).encode())
        digest.update(_file_hash(file))


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIPPED_FOLDERS]
        for name in names:
            yield Path(root, name)


def _file_hash(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").digest()
    except OSError:
        return b"unreadable"
