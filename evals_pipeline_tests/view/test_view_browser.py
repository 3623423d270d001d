"""The view in headless Chromium, as a reader uses it: the runs list, a report opened from it, a
case page opened from the report, and two runs compared by picking them in the page. Nothing
but the view itself is fetched, and no page logs an error (its CSP included)."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline_tests.browser import headless_page, screenshot
from evals_pipeline_tests.view.conftest import Runs
from evals_pipeline_tests.view.viewer import running_view


def test_runs_report_case_and_compare_in_a_browser(runs: Runs, tmp_path: Path) -> None:
    with (
        running_view(str(runs.storage), runs.home) as view,
        headless_page(allow=(view.url + "/",)) as browser,
    ):
        page = browser.page
        page.goto(view.url + "/")
        assert page.locator("#runs tbody tr").count() == 2
        assert page.locator("#runs a.report").first.inner_text() == runs.newer.name

        # The newest report, then one of its failing cases.
        page.locator("#runs a.report").first.click()
        page.wait_for_selector("#matrix")
        assert page.url == f"{view.url}/reports/quickstart/{runs.newer.name}/report.html"
        failing = page.locator("a.cell.v-fail").first
        key = failing.get_attribute("data-case")
        assert key
        failing.click()
        page.wait_for_selector("#case-body .case-head h2")
        assert page.evaluate("location.hash") == f"#case/{key}"
        assert page.locator("#case-body .case-head h2").first.inner_text() == key.split("/", 1)[1]
        screenshot(page, tmp_path / "case.png")

        # Back to the list, then compare the older run against the newer, picked in the form.
        page.goto(view.url + "/")
        page.locator("a.compare", has_text="quickstart").click()
        page.wait_for_selector("form select[name=before]")
        page.select_option("select[name=before]", runs.newer.name)
        page.select_option("select[name=after]", runs.older.name)
        page.click("form button[type=submit]")
        page.wait_for_selector("#deltas")
        assert f"before={runs.newer.name}" in page.url and f"after={runs.older.name}" in page.url
        heading = page.locator("#comparison").inner_text()
        assert heading.startswith(runs.older.name) and runs.newer.name in heading
        agents = page.locator("#deltas tbody tr td:first-child").all_inner_texts()
        assert agents == ["careful", "hasty"]
        screenshot(page, tmp_path / "compare.png")
        assert browser.errors == []
        assert browser.blocked == []
