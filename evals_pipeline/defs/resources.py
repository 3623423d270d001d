"""The storage root every layer writes under: a local folder by default, or an object-store URL
(storage/root.py)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from evals_pipeline.results import ResultStore
from evals_pipeline.storage.root import StorageRoot, is_url, open_root

DEFAULT_STORAGE = ".evals/storage"


def storage_root_from_env() -> str:
    """EVALS_PIPELINE_STORAGE (a folder or a URL such as `s3://bucket/prefix`), else
    `.evals/storage` under the working directory; folders made absolute."""
    return storage_root(os.environ.get("EVALS_PIPELINE_STORAGE", DEFAULT_STORAGE))


def storage_root(value: str) -> str:
    """A storage root as given: a URL as is, a folder made absolute."""
    return value if is_url(value) else str(Path(value).resolve())


def step_folder(root: str, asset_key: dg.AssetKey, run_id: str) -> Path:
    """Where one run's step of an asset keeps its files (in this process's local folder of the
    root); earlier runs are never overwritten."""
    return Path(open_root(root).local, *asset_key.path, run_id)


class EvalStorage(dg.ConfigurableResource):
    """Where run folders go; each materialization writes under its own run id."""

    root: str

    @property
    def storage(self) -> StorageRoot:
        return open_root(self.root)

    def step_folder(self, asset_key: dg.AssetKey, run_id: str) -> Path:
        return step_folder(self.root, asset_key, run_id)

    def results(self, suite: str, run_id: str) -> ResultStore:
        """The suite's per-case result store, writing as `run_id`."""
        return ResultStore.of_suite(self.storage, suite, run_id)
