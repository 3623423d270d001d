"""`evals-pipeline ui` in a user's own project: after `evals-pipeline run` there, the Dagster UI
opens the instance and storage the run used (not a temporary one), shows the run's cases
materialized, its report link opens in the view started beside it, and Ctrl-C (SIGTERM here)
stops both with every process they started. In a browser, a new user's walk through it: the
suite's assets, a failing case, the report through the UI's link, a case page, a comparison."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.cli.ui import STOP_SECONDS
from evals_pipeline_tests.browser import headless_page, screenshot
from evals_pipeline_tests.dagster_dev import START_TIMEOUT_SECONDS, free_port, graphql

REPO = Path(__file__).resolve().parents[1]
CASES = 20  # the quickstart: 10 tests x 2 agents
UI_WAIT_MS = 60_000  # the UI loads its code location after it starts serving

REPORT_LINK = """
query Link($path: [String!]!) {
  assetOrError(assetKey: {path: $path}) {
    ... on Asset {
      assetMaterializations(limit: 1) {
        metadataEntries { label ... on UrlMetadataEntry { url } }
      }
    }
  }
}"""

PARTITIONS = """
query Stats($path: [String!]!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode { partitionStats { numMaterialized numPartitions } }
  }
}"""


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A user's project holding the quickstart, and an environment naming no instance,
    storage or suites: the commands find their defaults in the project."""
    project = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "quickstart", project / "quickstart")
    (project / ".git").mkdir()  # upward searches for .agentv stop here
    unset = ("DAGSTER_HOME", "EVALS_PIPELINE_STORAGE", "EVALS_PIPELINE_SUITES")
    return project, {k: v for k, v in os.environ.items() if k not in unset}


def _cli(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "evals_pipeline.cli", *args]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)


def _wait_for_ui(port: int, ui: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        try:
            graphql(port, "{ version }")
            return
        except (urllib.error.URLError, ConnectionError):
            assert ui.poll() is None, f"ui ended with {ui.returncode}:\n{ui.communicate()[0]}"
            assert time.monotonic() < deadline, "the UI did not start"
            time.sleep(1)


def _processes() -> list[tuple[int, str, int, int]]:
    """(pid, state, parent, process group) of every process."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # it ended
            found.append((int(entry.name), fields[0], int(fields[1]), int(fields[2])))
    return found


def _child_groups(pid: int) -> set[int]:
    """The process groups of `pid`'s children (each child leads a session of its own)."""
    return {group for _, _, parent, group in _processes() if parent == pid}


def _live_members(groups: set[int]) -> list[int]:
    """The processes of `groups` still running (a zombie has ended: its parent reaps it)."""
    return [pid for pid, state, _, group in _processes() if group in groups and state != "Z"]


@dataclass
class Ui:
    """A running `evals-pipeline ui` (its output once it has stopped)."""

    process: subprocess.Popen[str]
    url: str
    view_url: str
    output: str = ""


@contextmanager
def _running_ui(tmp_path: Path, runs: int = 1) -> Iterator[Ui]:
    """The quickstart run `runs` times in a user's project, then `evals-pipeline ui` there,
    stopped with SIGTERM after."""
    project, env = _project(tmp_path)
    port, view_port = free_port(), free_port()
    env["EVALS_PIPELINE_VIEW_URL"] = f"http://127.0.0.1:{view_port}"  # as the default 7580
    for _ in range(runs):
        done = _cli(project, env, "run", "quickstart")
        assert done.returncode in (0, 1), done.stderr  # 1: some cases fail on purpose
    argv = [sys.executable, "-m", "evals_pipeline.cli", "ui", "--port", str(port)]
    argv += ["--view-port", str(view_port)]
    process = subprocess.Popen(
        argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    ui = Ui(process, f"http://127.0.0.1:{port}", env["EVALS_PIPELINE_VIEW_URL"])
    try:
        _wait_for_ui(port, process)
        yield ui
    finally:
        process.send_signal(signal.SIGTERM)
        ui.output, _ = process.communicate(timeout=STOP_SECONDS + 30)


def test_ui_opens_the_instance_and_storage_run_used_in_the_project(tmp_path: Path) -> None:
    with _running_ui(tmp_path) as ui:
        port = int(ui.url.rsplit(":", 1)[1])
        path = ["quickstart", "grades"]
        stats = graphql(port, PARTITIONS, {"path": path})["assetNodeOrError"]["partitionStats"]
        # The run's instance: its registered cases, all materialized by the run.
        assert stats == {"numMaterialized": CASES, "numPartitions": CASES}
        info = graphql(port, "{ instance { info } }")["instance"]["info"]
        home = tmp_path / "project" / ".evals" / "dagster"
        assert str(home) in info  # the project's home, no temporary one
        assert "BatchingSqliteEventLogStorage" in info  # with the shipped dagster.yaml
        # The run's report link opens: `ui` serves the storage root beside the UI.
        found = graphql(port, REPORT_LINK, {"path": ["quickstart", "eval_report"]})
        entries = found["assetOrError"]["assetMaterializations"][0]["metadataEntries"]
        link = next(e["url"] for e in entries if e["label"] == "report")
        assert link.startswith(f"{ui.view_url}/reports/quickstart/"), link
        with urllib.request.urlopen(link, timeout=30) as page:
            assert "<html" in page.read().decode()[:500].lower()
        groups = _child_groups(ui.process.pid)
        assert groups, "ui started no process"
    assert ui.process.returncode == 0, ui.output
    assert f"Dagster UI  {ui.url}" in ui.output
    assert f"reports     {ui.view_url}" in ui.output
    assert not _live_members(groups), "a process of the UI outlived it"


def test_the_ui_s_processes_stop_when_ui_is_killed_outright(tmp_path: Path) -> None:
    with _running_ui(tmp_path, runs=0) as ui:
        groups = _child_groups(ui.process.pid)
        assert groups, "ui started no process"
        ui.process.kill()  # no handler runs: the children hear of it from the kernel
        ui.process.wait()
        deadline = time.monotonic() + STOP_SECONDS + 30
        while (left := _live_members(groups)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not left, f"processes of the killed ui still run: {left}"


def test_a_new_user_finds_a_failing_case_and_its_report_from_the_ui(tmp_path: Path) -> None:
    """In a browser: the suite's assets, a failing case on the `failures` list with its reason,
    the report opened through `eval_report`'s link, a case page in it, and two runs compared
    in the view."""
    with _running_ui(tmp_path, runs=2) as ui, headless_page(allow=(ui.url, ui.view_url)) as b:
        page = b.page
        page.goto(f"{ui.url}/asset-groups/quickstart")
        page.wait_for_selector("text=failures", timeout=UI_WAIT_MS)  # a node of the graph
        screenshot(page, tmp_path / "graph.png")

        # The failing cases are the partitions of `failures`, each with its reason.
        page.goto(f"{ui.url}/assets/quickstart/failures?view=partitions")
        page.get_by_text("hasty|add-numbers", exact=True).first.click(timeout=UI_WAIT_MS)
        page.wait_for_selector("text=score 0.00 < 0.8: equals-42", timeout=UI_WAIT_MS)
        assert page.get_by_text("careful|add-numbers", exact=True).count() == 0  # it passed
        screenshot(page, tmp_path / "failures.png")

        # The report, through the link on eval_report (it opens a new tab: followed here).
        page.goto(f"{ui.url}/assets/quickstart/eval_report")
        link = page.locator(f"a[href^='{ui.view_url}/reports/quickstart/']").first
        link.wait_for(timeout=UI_WAIT_MS)
        page.goto(str(link.get_attribute("href")))
        page.wait_for_selector("#matrix")
        page.locator("a.cell.v-fail").first.click()
        page.wait_for_selector("#case-body .case-head h2")
        screenshot(page, tmp_path / "case.png")

        # Two runs compared in the view, picked in its form.
        page.goto(f"{ui.view_url}/")
        older, newer = reversed(page.locator("#runs a.report").all_inner_texts()[:2])
        page.locator("a.compare", has_text="quickstart").click()
        page.wait_for_selector("form select[name=before]")
        page.select_option("select[name=before]", older)
        page.select_option("select[name=after]", newer)
        page.click("form button[type=submit]")
        page.wait_for_selector("#deltas")
        assert page.locator("#deltas tbody tr td:first-child").all_inner_texts() == [
            "careful",
            "hasty",
        ]
        assert b.errors == [], b.errors
        assert b.blocked == [], b.blocked  # nothing but the two local servers was fetched


def test_ui_refuses_a_broken_suite_with_its_location_before_starting(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    suite = project / "quickstart" / "quickstart.eval.yaml"
    suite.write_text("name: broken\ntests:\n  - id: one\n    input: [unclosed\n")
    done = _cli(project, env, "ui", "--no-view", "--port", str(free_port()))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{suite}:" in done.stderr
    assert "Dagster UI" not in done.stdout  # nothing was started


def test_ui_without_suites_says_where_it_looked(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _, env = _project(tmp_path)
    done = _cli(empty, env, "ui", "--no-view")
    assert done.returncode == 2
    assert "no suite files" in done.stderr
