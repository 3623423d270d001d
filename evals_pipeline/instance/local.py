"""The local Dagster instance `evals-pipeline` commands use, set up once even when several
commands start at the same moment on a fresh DAGSTER_HOME; a fresh home's databases are a copy
of the home template (instance/home_template.py)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import dagster as dg

from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage, event_log_settings
from evals_pipeline.instance.home_template import copy_template, home_template
from evals_pipeline.workspaces.locks import file_lock

LOCK_FILE_NAME = ".evals-pipeline-instance.lock"
SETTINGS_FILE = "dagster.yaml"


def shipped_settings() -> str:
    """The instance settings evals-pipeline ships (telemetry off, the tagging run queue with its
    limits, pools held per run, run monitoring): instance/dagster.yaml, docs/deployment.md."""
    return resources.files(__package__).joinpath(SETTINGS_FILE).read_text()


def fresh_settings(home: Path) -> str:
    """The dagster.yaml written into a fresh `home`: the shipped settings and the batching
    event log in the home's history/runs."""
    return f"{shipped_settings()}\n{event_log_settings(home)}"


def local_instance(home: Path) -> dg.DagsterInstance:
    """The instance in `home` (created on first use, with the shipped settings and the batching
    event log unless the home has its own dagster.yaml), its storages created under a lock.

    Each sqlite storage creates its tables and stamps its alembic revision the first time it is
    opened; two processes doing that at once leave two alembic heads, and every later command
    on that home fails. Opening the storages under one file lock makes the first one create them
    and the others find them. A fresh home with the shipped settings gets the home template's
    databases first (~2 s of Dagster's set-up saved); a home with its own settings (another
    storage, Postgres) gets nothing copied.
    """
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / LOCK_FILE_NAME):
        settings = home / SETTINGS_FILE
        if not settings.exists() or not settings.read_text().strip():
            # A home's own settings are kept.
            template = home_template(fresh_settings, set_up_fresh)
            if template is not None:
                copy_template(template, home)
            settings.write_text(fresh_settings(home))
        return open_storages(home)


def set_up_fresh(home: Path) -> dg.DagsterInstance:
    """The instance in an empty `home`, set up by Dagster with the shipped settings."""
    (home / SETTINGS_FILE).write_text(fresh_settings(home))
    return open_storages(home)


def open_storages(home: Path) -> dg.DagsterInstance:
    """The instance in `home`, every storage opened, so each is created (and stamped) now."""
    instance = dg.DagsterInstance.from_config(str(home))
    instance.get_runs_count()
    instance.event_log_storage.get_asset_records([])
    instance.schedule_storage  # noqa: B018
    if isinstance(instance.event_log_storage, BatchingSqliteEventLogStorage):
        # Once per Dagster version, here rather than in a home's first run (~0.1 s).
        instance.event_log_storage.run_shard_template()
    return instance


if __name__ == "__main__":
    # `make`'s set-up of the virtualenv: the home template, shipped in the environment.
    print(home_template(fresh_settings, set_up_fresh))
