"""Each stored record's bytes, once: a run's, session's or grade's JSON in a file named by its
digest, in its case's folder of the result store. The result cache's entries (store.py) and a
run's record tables (storage/records.py) point at that file instead of each holding a copy."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evals_pipeline.secrets import run_redactor

PREFIX = "record-"


def record_text(record: BaseModel, context: dict[str, Any] | None) -> str:
    """`record` as stored: its JSON with paths made references by `context`, secrets scrubbed
    (the same text a run's record table would hold for it)."""
    return run_redactor().json(record.model_dump_json(context=context))


def record_file(case_folder: Path, text: str) -> Path:
    """Where the record whose stored text is `text` lies in its case's folder: named by the
    text's digest, so equal records share a file and a file never changes once written."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return case_folder / f"{PREFIX}{digest}.json"


def write_record_file(path: Path, text: str) -> bool:
    """Write `text` to `path` (renamed into place whole) unless it is there already; whether
    it was written."""
    data = text.encode()
    try:
        if path.stat().st_size == len(data):
            return False  # named by its digest: what is there is this text (unless cut short)
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
    return True
