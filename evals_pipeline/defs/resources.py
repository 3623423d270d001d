"""The storage root every layer writes under (a local folder by default)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from evals_pipeline.results import ResultStore

DEFAULT_STORAGE = ".evals/storage"


def storage_root_from_env() -> str:
    """EVALS_PIPELINE_STORAGE, else `.evals/storage` under the working directory (absolute)."""
    return str(Path(os.environ.get("EVALS_PIPELINE_STORAGE", DEFAULT_STORAGE)).resolve())


def step_folder(root: str, asset_key: dg.AssetKey, run_id: str) -> Path:
    """Where one run's step of an asset keeps its files; earlier runs are never overwritten."""
    return Path(root, *asset_key.path, run_id)


class EvalStorage(dg.ConfigurableResource):
    """Where run folders go; each materialization writes under its own run id."""

    root: str

    def step_folder(self, asset_key: dg.AssetKey, run_id: str) -> Path:
        return step_folder(self.root, asset_key, run_id)

    def results(self, suite: str, run_id: str) -> ResultStore:
        """The suite's per-case result store, writing as `run_id`."""
        return ResultStore.of_suite(Path(self.root), suite, run_id)
