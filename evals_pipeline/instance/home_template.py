"""A fresh DAGSTER_HOME's databases as a copy of a set-up empty home, not set up anew.

Dagster sets a new home's sqlite databases up (runs, the event log's index, schedules) with DDL
statements each committed to disk and an alembic stamp read from its revision scripts: ~2 s,
against ~0.2 s to open a set-up home; a CI job starts from a fresh home every time. The template
is a home Dagster itself set up, with the shipped settings, made once per Dagster version and
settings (its key), its instance-specific rows removed; a fresh home gets a copy of its files.

Where it lives: `<sys.prefix>/share/evals-pipeline/home-templates/<key>`, built by `make`'s
set-up of the virtualenv (`python -m evals_pipeline.instance.local`), else, where that
folder is not writable, in the user's cache folder ($XDG_CACHE_HOME, ~/.cache), built on first use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import dagster as dg
from dagster.version import __version__ as dagster_version

FORMAT = 1
"""Our template's layout (which files, which rows kept): part of its key."""
KEPT_TABLES = frozenset({"alembic_version", "secondary_indexes"})
"""The rows a template keeps: its migrations' stamp and the data migrations marked done. Every
other row (instance_info's run_storage_id, made on first use, above all) belongs to one home."""
FOLDER = Path("evals-pipeline") / "home-templates"


Settings = Callable[[Path], str]
"""A home's dagster.yaml, given the home (its storages' folders are in it)."""
SetUp = Callable[[Path], dg.DagsterInstance]
"""Writes a fresh home's settings and opens the instance with every storage set up."""
PLACEHOLDER = Path("/dagster-home")
"""The home a template's key is computed for: the same for every home."""


def template_key(settings: Settings) -> str:
    """The template's name for homes with `settings` under this Dagster."""
    digest = hashlib.sha256(f"{FORMAT}\n{settings(PLACEHOLDER)}".encode()).hexdigest()[:12]
    return f"dagster-{dagster_version}-{digest}"


def template_roots() -> list[Path]:
    """Where templates are looked for and built, in order: the installed environment's share
    folder (shipped with it), then the user's cache folder."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return [Path(sys.prefix) / "share" / FOLDER, Path(cache) / FOLDER]


def home_template(settings: Settings, set_up: SetUp) -> Path | None:
    """The template for homes with `settings` (made by `set_up`): found, else built in the
    first root that can hold it; None when none can (a home is then set up by Dagster, as
    without a template)."""
    key = template_key(settings)
    for root in template_roots():
        if (root / key).is_dir():
            return root / key
    for root in template_roots():
        try:
            return build_template(root / key, set_up)
        except OSError:
            continue  # not writable here: the next root
    return None


def build_template(target: Path, set_up: SetUp) -> Path:
    """`target`, a home `set_up` made (unless there already), holding only its databases with
    their instance-specific rows removed. Built in a folder of its own and renamed into place:
    two processes building it at once both end with the one renamed first."""
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(building, ignore_errors=True)
    try:
        building.mkdir()
        set_up(building).dispose()  # every connection closed: each WAL in its file
        kept = {building / name for name in databases(building)}
        for path in list(building.rglob("*")):  # its settings, its lock: the home's own
            if path.is_file() and path not in kept:
                path.unlink()
        for database in kept:
            _strip(database)
        try:
            building.rename(target)
        except OSError:
            if not target.is_dir():
                raise
            # Another process renamed its own first: theirs is the same.
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


def databases(home: Path) -> list[Path]:
    """The sqlite databases under `home`, relative paths sorted."""
    return sorted(p.relative_to(home) for p in home.rglob("*.db"))


def _strip(database: Path) -> None:
    """Empty every table of `database` but KEPT_TABLES, its write-ahead log folded in."""
    conn = sqlite3.connect(database)
    try:
        tables = [
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if row[0] not in KEPT_TABLES and not row[0].startswith("sqlite_")
        ]
        with conn:
            for table in tables:
                conn.execute(f'DELETE FROM "{table}"')
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)


def copy_template(template: Path, home: Path) -> bool:
    """Copy `template`'s databases into `home`; False, with nothing copied, when `home` has any
    database already (it is set up, or half set up: Dagster checks and finishes it)."""
    found = databases(template)
    if not found or any((home / name).exists() for name in found):
        return False
    for name in found:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        # Renamed into place: a copy cut short leaves no half database for Dagster to open.
        part = (home / name).with_name(f".{name.name}.{os.getpid()}.part")
        shutil.copyfile(template / name, part)
        os.replace(part, home / name)
    return True
