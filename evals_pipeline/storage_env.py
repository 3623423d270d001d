"""Where a process's storage root is: EVALS_PIPELINE_STORAGE, or `.evals/storage` under the
working directory. Without Dagster, so commands that only read reports (`runs`, `compare`) start
without importing it (~2 s)."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.settings import Settings
from evals_pipeline.storage.root import is_url

DEFAULT_STORAGE = ".evals/storage"


def storage_root_from_env(settings: Settings | None = None) -> str:
    """EVALS_PIPELINE_STORAGE of `settings` (default: this process's; a folder or a URL such as
    `s3://bucket/prefix`), else `.evals/storage` under the working directory; folders made
    absolute."""
    value = (settings or Settings.current()).storage
    return storage_root(DEFAULT_STORAGE if value is None else value)


def storage_root(value: str) -> str:
    """A storage root as given: a URL as is, a folder made absolute."""
    return value if is_url(value) else str(Path(value).resolve())
