"""Case pages carried over from an earlier report: a page whose records, session files and
page-making code are unchanged is linked from that report's `cases/` instead of made again
(a re-run of 10,000 cases reads 10,000 transcripts otherwise, ~0.7 ms each).

Each report writes `cases/pages.json`: a digest of the code that makes pages, and each page's
key, a digest of everything it shows (the case's grade, case, sessions and judgment records, its
test id and failure reason, and the size and mtime of each session's messages and events files).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from evals_pipeline.models.session import Session
from evals_pipeline.reporting.html import case_files, transcript
from evals_pipeline.reporting.record_digest import record_digest
from evals_pipeline.storage import preview

INDEX = "pages.json"


def code_digest() -> str:
    """A digest of the modules a page's content comes from: a change there remakes every page."""
    digest = hashlib.sha256()
    for module in (case_files, transcript, preview):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def page_key(
    records: Sequence[BaseModel | None],
    sessions: Sequence[Session],
    *fields: str | None,
    stored: Mapping[int, bytes] | None = None,
) -> str:
    """The key of one page: its records and fields, and the state of its sessions' files.
    `stored` holds `record_digest`s of records as loaded, by `id()` of the record; the others
    are serialized here."""
    known = stored or {}
    digest = hashlib.sha256()
    for record in records:
        digest.update(b"-" if record is None else _digest(record, known))
        digest.update(b"\0")
    for session in sessions:
        digest.update(_digest(session, known))
        for path in (session.messages_path, session.events_path):
            digest.update(_file_state(path).encode())
    for field in fields:
        digest.update(b"\0" + (field or "").encode())
    return digest.hexdigest()


def _digest(record: BaseModel, known: Mapping[int, bytes]) -> bytes:
    found = known.get(id(record))
    return found if found is not None else record_digest(record.model_dump_json())


def _file_state(path: str | None) -> str:
    if not path:
        return "|none"
    try:
        stat = os.stat(path)
    except OSError:
        return "|missing"
    return f"|{stat.st_size}:{stat.st_mtime_ns}"


class PageCache:
    """The pages of an earlier report (none when it has no index, or one made by other code),
    and the keys of this report's pages, written to its `cases/pages.json` by `save`."""

    def __init__(self, folder: Path, previous: Path | None) -> None:
        self.folder = folder
        self.code = code_digest()
        self.keys: dict[str, str] = {}
        self._previous = previous
        self._previous_dir, self._folder_dir = os.fspath(previous or ""), os.fspath(folder)
        self._previous_keys: dict[str, str] = {}
        index = previous / case_files.CASES_DIR / INDEX if previous is not None else None
        if index is not None and index.is_file():
            try:
                stored = json.loads(index.read_text(encoding="utf-8"))
            except ValueError:  # a half-written index: make its pages again
                stored = {}
            if isinstance(stored, dict) and stored.get("code") == self.code:
                self._previous_keys = dict(stored.get("pages") or {})

    def reuse(self, agent: str, case_key: str, key: str) -> bool:
        """Link the earlier report's page of (agent, case) here when its key is `key`; False
        when it must be made."""
        page = case_files.case_id(agent, case_key)
        self.keys[page] = key
        if self._previous is None or self._previous_keys.get(page) != key:
            return False
        # Paths as strings: pathlib's joins cost as much as the link itself, 10,000 times.
        relative = case_files.case_file(agent, case_key)
        source = f"{self._previous_dir}/{relative}"
        target = f"{self._folder_dir}/{relative}"
        try:
            os.link(source, target)
        except FileExistsError:
            return False
        except OSError:
            try:
                shutil.copyfile(source, target)
            except OSError:  # gone since its index was written
                return False
        return True

    def save(self) -> Path:
        """Write this report's `cases/pages.json`."""
        path = self.folder / case_files.CASES_DIR / INDEX
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"code": self.code, "pages": self.keys}), encoding="utf-8")
        return path
