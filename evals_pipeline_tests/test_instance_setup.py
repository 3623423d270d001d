"""Several `evals-pipeline run`s started together on a fresh DAGSTER_HOME all complete, and the
instance they set up keeps working (no second alembic head); a new home's databases are copied
from the home template, and it comes with the template its runs' databases are copied from."""

from __future__ import annotations

import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage
from evals_pipeline.instance.home_template import home_template
from evals_pipeline.instance.local import fresh_settings, local_instance, set_up_fresh
from evals_pipeline_tests.test_cli import QUICKSTART, Done, cli

SUITE = str(QUICKSTART / "quickstart.eval.yaml")


def run(home: Path) -> Done:
    return cli("run", SUITE, "--target", "careful", "--test-id", "add-numbers", home=home)


def test_two_runs_at_once_on_a_fresh_home_then_a_third(tmp_path: Path) -> None:
    assert not (tmp_path / "dagster").exists()
    with ThreadPoolExecutor(max_workers=2) as pool:
        together = list(pool.map(run, [tmp_path, tmp_path]))
    for done in [*together, run(tmp_path)]:
        assert done.code == 0, done.explain()
        assert re.search(r"^careful +1 +1 +0 +0 ", done.stdout, re.M), done.explain()
        assert "alembic" not in done.stderr and "Traceback" not in done.stderr, done.explain()
    assert (tmp_path / "dagster" / ".evals-pipeline-instance.lock").exists()
    assert marks(tmp_path / "dagster") == marks(template())  # copied once, under the lock


def template() -> Path:
    found = home_template(fresh_settings, set_up_fresh)
    assert found is not None
    return found


def marks(home: Path) -> list[tuple[object, ...]]:
    """The data migrations a home's run storage marks done, with their times: a home Dagster
    set up has times of its own, a copy of the template the template's."""
    with sqlite3.connect(home / "history" / "runs.db") as conn:
        return sorted(conn.execute("SELECT * FROM secondary_indexes"))


def test_fresh_homes_from_the_template_run_the_quickstart_each_as_itself(tmp_path: Path) -> None:
    homes = [tmp_path / "first", tmp_path / "second"]
    for home in homes:
        home.mkdir()
        done = run(home)
        assert done.code == 0, done.explain()
        assert re.search(r"^careful +1 +1 +0 +0 ", done.stdout, re.M), done.explain()
        assert marks(home / "dagster") == marks(template())
    instances = [local_instance(home / "dagster") for home in homes]
    assert all(i.get_runs() for i in instances)
    ids = {i.run_storage.get_run_storage_id() for i in instances}
    assert len(ids) == 2, "two homes copied from one template share a run storage id"


def test_a_new_home_is_set_up_with_its_run_database_template(tmp_path: Path) -> None:
    """The empty run database each new run's database is copied from is made with the home,
    so a home's first run does not set one up in its time."""
    storage = local_instance(tmp_path / "home").event_log_storage
    assert isinstance(storage, BatchingSqliteEventLogStorage)
    templates = list((tmp_path / "home" / "history" / "runs").glob(".run-template-*.db"))
    assert len(templates) == 1
    made = templates[0].stat().st_mtime_ns
    with storage.run_connection("run-1"):
        pass
    assert templates[0].stat().st_mtime_ns == made  # copied, not made again
    assert Path(storage.path_for_shard("run-1")).exists()
