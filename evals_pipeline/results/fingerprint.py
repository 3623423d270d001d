"""A suite's fingerprint: one hash over its eval file, its targets file and every case's grade key
(results/keys.py), so whatever would re-run or re-grade a case changes it. The Dagster layer uses
it as the assets' code version: a changed suite or grader marks their partitions stale."""

from __future__ import annotations

import hashlib

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.results.keys import FileLookups, case_keys, content_hash
from evals_pipeline.suites import LoadedSuite, resolve_cases


def suite_fingerprint(loaded: LoadedSuite, cases: list[ResolvedCase] | None = None) -> str:
    """16 hex digits that change when the suite file, a file it names or a grader changes;
    `cases` are the suite's resolved cases when the caller has them already."""
    digest = hashlib.sha256()
    for path in (loaded.path, loaded.targets_file):
        if path is not None:
            digest.update(content_hash(path).encode())
    files = FileLookups()  # every case's grader scripts looked up and hashed once
    for case in resolve_cases(loaded) if cases is None else cases:
        digest.update(case_keys(case, _unversioned, files).grade.encode())
    return digest.hexdigest()[:16]


def _unversioned(case: ResolvedCase) -> str | None:
    # Code versions are read when a code location loads: no agent CLI is probed for them.
    return None
