"""report.html against a crafted link, in headless Chromium: the page opens only the case pages
of its own matrix, so a hash that walks out of `cases/` (to a script an agent left in its kept
workspace) runs nothing, and its Content-Security-Policy runs no script but its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.reporting.html import write_html_report
from evals_pipeline_tests.browser import headless_page
from evals_pipeline_tests.reporting.test_html_report import grades, report_of

EVIL = "window.pwned = true; document.title = 'pwned';\n"


def report(tmp_path: Path) -> Path:
    """A report at `tmp_path/report`, and an agent's script at `tmp_path/workspace/evil.js`,
    reachable from `cases/` by `..` (and one inside `cases/`, not a case of the matrix)."""
    folder = tmp_path / "report"
    folder.mkdir()
    graded = grades()
    write_html_report(report_of(graded), graded, folder)
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "evil.js").write_text(EVIL)
    (folder / "cases" / "claude" / "evil.js").write_text(EVIL)
    return folder / "report.html"


@pytest.mark.parametrize(
    "crafted",
    [
        "case/../../workspace/evil",
        "case/..%2F..%2Fworkspace%2Fevil",
        "case/claude/../../../workspace/evil",
        "case/claude/evil",  # a file in cases/ that is no cell of the matrix
        "case/__proto__",
    ],
)
def test_a_crafted_link_runs_nothing(tmp_path: Path, crafted: str) -> None:
    html = report(tmp_path)
    with headless_page() as browser:
        page = browser.page
        page.goto(f"{html.as_uri()}#{crafted}")
        page.wait_for_function("window.pwned || document.querySelector('#case-body .callout')")
        page.wait_for_timeout(300)
        assert page.evaluate("window.pwned") is None
        assert "in this report" in page.locator("#case-body").inner_text()
        assert "pwned" not in page.title()
        scripts = page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))")
        assert [s for s in scripts if s] == []
        # a case of the matrix still opens after it
        page.evaluate("location.hash = '#case/claude/t3'")
        page.wait_for_selector("#case-body .case-head h2")
        assert page.locator("#case-body .case-head h2").first.inner_text() == "t3"
        assert page.evaluate("window.pwned") is None
        assert browser.errors == []
        assert browser.blocked == []


def test_the_policy_refuses_injected_scripts(tmp_path: Path) -> None:
    """Were markup ever injected, the policy runs neither inline script nor handlers."""
    html = report(tmp_path)
    with headless_page() as browser:
        page = browser.page
        page.goto(html.as_uri())
        page.wait_for_selector("#matrix")
        page.evaluate(
            """() => {
                const s = document.createElement('script');
                s.textContent = 'window.pwned = true';
                document.body.appendChild(s);
                const img = document.createElement('img');
                img.setAttribute('onerror', 'window.pwned = true');
                img.src = 'nowhere.png';
                document.body.appendChild(img);
            }"""
        )
        page.wait_for_timeout(300)
        assert page.evaluate("window.pwned") is None
        assert any("Content Security Policy" in e for e in browser.errors), browser.errors


def test_every_case_of_the_matrix_opens(tmp_path: Path) -> None:
    html = report(tmp_path)
    with headless_page() as browser:
        page = browser.page
        page.goto(html.as_uri())
        page.wait_for_selector("#matrix")
        keys = page.evaluate("[...document.querySelectorAll('a.cell')].map(a => a.dataset.case)")
        assert len(keys) == 6
        for key in keys:
            page.click(f"a.cell[data-case='{key}']")
            page.wait_for_selector("#case-body .case-head h2")
            assert (
                page.locator("#case-body .case-head .chip").first.inner_text() == key.split("/")[0]
            )
            page.click("a.back")
            page.wait_for_selector("#matrix", state="visible")
        assert browser.errors == []
        assert browser.blocked == []
