"""report.html in a real browser: the coding-agents example runs (the real agent CLIs against
the scripted model server), then headless Chromium opens its report from file:// with the network
blocked, goes from the matrix to a failed case and reads its transcript, diff, grader evidence
and judge quotes. Screenshots go to the test's tmp dir and to .evals/screenshots/."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.suite_run import SuiteRun, run_suite
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.agent_clis import require_agent
from evals_pipeline_tests.browser import headless_page, screenshot
from evals_pipeline_tests.defs.conftest import REPO

SUITE = REPO / "examples" / "coding-agents" / "coding-agents.eval.yaml"
AGENTS = {"claude": "claude-code", "codex": "codex", "pi": "pi-agent"}
SCREENSHOTS = REPO / ".evals" / "screenshots"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    for kind in AGENTS.values():
        require_agent(kind)
    storage = tmp_path_factory.mktemp("report-browser") / "storage"
    loaded = load_suite(SUITE)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(loaded)))
    with dg.instance_for_test() as instance:
        return run_suite(
            instance, loaded, str(storage), agents=list(AGENTS), case_keys=keys, echo=lambda _: None
        )


def test_a_failed_case_opens_from_the_matrix_with_its_evidence(
    run: SuiteRun, tmp_path: Path
) -> None:
    html = run.report_folder / "report.html"
    assert html.is_file()
    assert sorted(p.name for p in (run.report_folder / "cases" / "claude").iterdir()) == [
        "fizzbuzz.js",
        "mean.js",
        "slugify.js",
    ]
    with headless_page() as browser:
        page = browser.page
        page.goto(html.as_uri())
        page.wait_for_selector("#matrix")
        assert page.locator("#matrix thead th").all_text_contents() == ["test", *AGENTS]
        assert page.locator("a.cell").count() == 9
        assert page.locator("a.cell.v-fail").count() == 3
        assert page.locator("svg.plot").count() >= 3
        screenshot(page, tmp_path / "overview.png", SCREENSHOTS / "report-overview.png")

        # the failed filter leaves the one failing test
        page.click("button[data-filter=failed]")
        rows = page.locator("#matrix tbody tr:visible th")
        assert rows.all_inner_texts() == ["mean"]

        page.click("a.cell.v-fail[data-case='claude/mean']")
        page.wait_for_selector(".transcript .msg")
        assert page.evaluate("location.hash") == "#case/claude/mean"
        body = page.locator("#case-body")
        assert body.locator(".case-head h2").first.inner_text() == "mean"
        assert "score 0.00 < 0.8: tests-pass" in body.locator(".callout.reason").inner_text()
        # the task as the agent got it
        assert "stats.py with mean(values)" in body.locator("pre.input").inner_text()
        # transcript: messages, tool calls collapsed until opened
        transcript = body.locator(".transcript")
        assert transcript.is_visible()
        assert "stats.py is written." in transcript.inner_text()
        bash = transcript.locator("details.tool-call", has_text="Bash").first
        assert not bash.locator(".io").is_visible()
        bash.locator("summary").click()
        assert "test_stats.py" in bash.locator(".io").inner_text()
        # the file diff
        diff = body.locator("pre.diff")
        assert diff.is_visible()
        assert "+def mean(values):" in diff.inner_text()
        # the failing grader, with its evidence
        grader = body.locator(".grader", has_text="tests-pass").first
        assert grader.is_visible()
        assert "test_stats.py passes" in grader.locator("li.miss").inner_text()
        assert "AssertionError" in grader.locator("li.miss pre.evidence").inner_text()
        # the judges: critiques and grounded quotes on the failed dimension
        correctness = body.locator("details.dimension", has_text="correctness").first
        assert correctness.get_attribute("open") is not None
        assert "Quote 1 floors the mean." in correctness.locator(".critique").first.inner_text()
        quote = correctness.locator("blockquote.quote.grounded").first
        assert quote.is_visible()
        assert "return sum(values) // len(values)" in quote.inner_text()
        assert "grounded" in quote.locator(".mark").inner_text()
        assert "incorrect implementation" in body.locator(".callout.failure").inner_text()
        shots = screenshot(page, tmp_path / "case.png", SCREENSHOTS / "report-case-mean.png")

        # back to the matrix, the filter still applied
        page.click("a.back")
        page.wait_for_selector("#matrix", state="visible")
        assert page.locator("#case-view").is_hidden()
        assert browser.errors == []
        assert browser.blocked == []
    assert all(p.stat().st_size > 10_000 for p in shots)
