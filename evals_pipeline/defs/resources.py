"""The storage root every layer writes under: a local folder by default, or an object-store URL
(storage/root.py)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from evals_pipeline.results import ResultStore
from evals_pipeline.storage.root import StorageRoot, open_root

# Found in storage_env.py (no Dagster, for commands that only read reports); importable here too.
from evals_pipeline.storage_env import storage_root as storage_root
from evals_pipeline.storage_env import storage_root_from_env as storage_root_from_env


def step_folder(root: str, asset_key: dg.AssetKey, run_id: str) -> Path:
    """Where one run's step of an asset keeps its files (in this process's local folder of the
    root); earlier runs are never overwritten."""
    return open_root(root).step_folder(asset_key.path, run_id)


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
