"""A suite's fingerprint: one hash over its eval file, its targets file, every case's content and
the content of every file a case names as a file (as result keys find them, results/keys.py), so whatever
would re-run or re-grade a case changes it. The Dagster layer uses it as the assets' code
version: a changed suite or grader marks their partitions stale."""

from __future__ import annotations

import hashlib

import orjson

from evals_pipeline.results.keys import KEY_VERSION, FileLookups, content_hash, referenced_files
from evals_pipeline.suites import LoadedSuite
from evals_pipeline.suites.resolution import Resolution, resolve_recorded


def suite_fingerprint(loaded: LoadedSuite, resolution: Resolution | None = None) -> str:
    """16 hex digits that change when the suite file, a case, a file a case names or a grader
    changes; `resolution`: the suite's resolved cases when the caller has them already (their
    content hashes are then kept for its cases sensor)."""
    digest = hashlib.sha256(f"{KEY_VERSION}\0".encode())
    for path in (loaded.path, loaded.targets_file):
        if path is not None:
            digest.update(content_hash(path).encode())
    hashes, named = (resolution or resolve_recorded(loaded)).contents()
    digest.update(orjson.dumps(hashes, option=orjson.OPT_SORT_KEYS))
    files = referenced_files(named, loaded.base_dir, FileLookups())
    digest.update(orjson.dumps(files, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()[:16]
