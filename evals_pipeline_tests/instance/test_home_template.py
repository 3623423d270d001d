"""A fresh DAGSTER_HOME's databases are a copy of the home template (Dagster's own set-up, made
once per Dagster version and settings), each home with its own identity, every migration done;
a home with its own settings gets nothing copied."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import dagster as dg

from evals_pipeline.instance.home_template import (
    KEPT_TABLES,
    build_template,
    databases,
    home_template,
    template_key,
)
from evals_pipeline.instance.local import fresh_settings, local_instance, set_up_fresh

BIN = Path(sys.executable).parent


def rows(database: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(database) as conn:
        return sorted(conn.execute(f'SELECT * FROM "{table}"'))


def tables_with_rows(database: Path) -> set[str]:
    with sqlite3.connect(database) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n for n in names if conn.execute(f'SELECT 1 FROM "{n}" LIMIT 1').fetchone()}


def test_a_fresh_home_is_a_copy_of_the_template_with_an_identity_of_its_own(
    tmp_path: Path,
) -> None:
    template = home_template(fresh_settings, set_up_fresh)
    assert template is not None
    assert template.name == template_key(fresh_settings)
    assert {str(p) for p in databases(template)} == {
        "history/runs.db",
        f"history/runs/.run-template-{dg.__version__}.db",
        "history/runs/index.db",
        "schedules/schedules.db",
    }
    for name in databases(template):
        # Only the migration marks are kept: no run_storage_id, no heartbeat, no key.
        assert tables_with_rows(template / name) <= KEPT_TABLES, name
    first, second = local_instance(tmp_path / "a"), local_instance(tmp_path / "b")
    for name in databases(template):
        # Copied, not set up again by Dagster (which would write new migration times).
        assert rows(tmp_path / "a" / name, "alembic_version") == rows(
            template / name, "alembic_version"
        )
    assert rows(tmp_path / "a" / "history" / "runs.db", "secondary_indexes") == rows(
        template / "history" / "runs.db", "secondary_indexes"
    )
    ids = {first.run_storage.get_run_storage_id(), second.run_storage.get_run_storage_id()}
    assert len(ids) == 2
    assert first.run_storage.get_run_storage_id() in ids  # kept once made
    assert not (template / "history" / "runs.db-wal").exists()
    assert tables_with_rows(template / "history" / "runs.db") <= KEPT_TABLES


def test_a_home_from_the_template_has_every_migration_done(tmp_path: Path) -> None:
    instance = local_instance(tmp_path / "home")
    for storage in (instance.run_storage, instance.event_log_storage, instance.schedule_storage):
        stamped, head = storage.alembic_version()  # type: ignore[attr-defined]
        assert stamped == head, storage
    done = subprocess.run(
        [str(BIN / "dagster"), "instance", "migrate"],
        env={**os.environ, "DAGSTER_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Skipping already applied data migration: run_partitions" in done.stdout
    assert "Starting data migration" not in done.stdout, done.stdout
    instance.upgrade()  # Dagster's own upgrade finds nothing to do either
    assert instance.run_storage.alembic_version()[0] == stamped  # type: ignore[attr-defined]


def test_a_home_with_its_own_settings_gets_no_database_copied(tmp_path: Path) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "storage"
    home.mkdir()
    (home / "dagster.yaml").write_text(
        f"telemetry: {{enabled: false}}\nstorage: {{sqlite: {{base_dir: {elsewhere}}}}}\n"
    )
    local_instance(home).get_runs_count()
    assert databases(home) == []
    assert (elsewhere / "history" / "runs.db").exists()


BUILD = """
import sys
from pathlib import Path
from evals_pipeline.instance.home_template import build_template
from evals_pipeline.instance.local import set_up_fresh
print(build_template(Path(sys.argv[1]), set_up_fresh))
"""


def test_two_processes_building_a_template_at_once_leave_one(tmp_path: Path) -> None:
    """Two commands on two fresh homes may build the template at once: each builds its own and
    renames it into place; the second finds the first's there."""
    target = tmp_path / "templates" / template_key(fresh_settings)
    builds = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD, str(target)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for build in builds:
        out, err = build.communicate(timeout=180)
        assert build.returncode == 0, err
        assert out.strip() == str(target)
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no build left behind
    assert len(databases(target)) == 4
    assert build_template(target, set_up_fresh) == target  # found, not built again
