"""Where commands find the Dagster instance and the storage root."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagster import DagsterInstance

    from evals_pipeline.settings import Settings

DEFAULT_DAGSTER_HOME = ".evals/dagster"


def cli_instance(settings: Settings | None = None) -> DagsterInstance:
    """The local Dagster instance: DAGSTER_HOME of `settings` (default: this process's), else
    `.evals/dagster` (created on first use). The folder is handed to the instance, not written to the environment: the steps get the
    instance from the run (the suite parse cache finds the same default, suites/parse_cache.py)."""
    from evals_pipeline.instance.local import local_instance

    return local_instance(cli_home(settings))


def cli_home(settings: Settings | None = None) -> Path:
    """The local instance's folder: DAGSTER_HOME of `settings` (default: this process's), else
    `.evals/dagster`, absolute."""
    from evals_pipeline.settings import Settings

    return Path((settings or Settings.current()).dagster_home or DEFAULT_DAGSTER_HOME).resolve()


def storage_url(args: argparse.Namespace) -> str:
    """The storage root a command uses: `--storage`, else $EVALS_PIPELINE_STORAGE or the default."""
    from evals_pipeline.storage_env import storage_root, storage_root_from_env

    return storage_root(args.storage) if args.storage else storage_root_from_env(args.settings)


def storage_folder(args: argparse.Namespace, suites: list[str] | None = None) -> Path:
    """The storage root's local folder, with the report files of `suites` (default: all) that
    the history reads fetched into it when the root is an object store."""
    from evals_pipeline.history.entries import mirror_reports
    from evals_pipeline.storage.root import open_root

    return mirror_reports(open_root(storage_url(args)), suites)
