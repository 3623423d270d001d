"""Every way a cli agent or a code grader can misbehave, in one suite run by the real
`evals-pipeline run` (issue 13, item 9): each case ends with its own error and reason (or, by
AgentV's contract, a score with a visible warning), the other cases complete, and no process
of the run is left behind.

The agent and grader are small scripts (fixtures/misbehaving/): the test id picks the fault.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evals_pipeline.storage.records import read_records

FIXTURE = Path(__file__).parent / "fixtures" / "misbehaving"
EXIT_CODE_WARNING = "scored 1 by its exit code (AgentV's plain-text convention)"


@dataclass(frozen=True)
class Expected:
    verdict: str
    error: str | None = None
    warning: str | None = None


# test id → how its case must end (error / warning: a part of the reason)
CASES = {
    "agent-garbage": Expected("fail"),  # the bytes are its answer, graded as such
    "agent-truncated": Expected("pass", warning="the output looks like truncated JSON"),
    "agent-no-output": Expected("error", error="the command did not write it"),
    "agent-exit-stderr": Expected("error", error="exited with code 3: fatal: the disk is full"),
    "agent-hang": Expected("error", error="timed out after 3 s"),
    "agent-children": Expected("error", error="timed out after 3 s"),
    "agent-huge-stdout": Expected("pass"),
    "agent-signal": Expected("error", error="killed by signal 9 (SIGKILL)"),
    "grader-garbage": Expected("error", error="stdout is not valid JSON"),
    "grader-truncated": Expected("error", error="stdout is not valid JSON (Unterminated string"),
    "grader-exit-stderr": Expected(
        "error", error="exited with code 1: KeyError: 'expected_output'"
    ),
    "grader-hang": Expected("error", error="grader 'check' failed: timed out after 3 s"),
    "grader-children": Expected("error", error="grader 'check' failed: timed out after 3 s"),
    "grader-huge-stdout": Expected(
        "pass", warning="printed 52,428,800 characters of plain text, not a JSON result"
    ),
    "grader-signal": Expected("error", error="grader 'check' failed: killed by signal 9 (SIGKILL)"),
    "grader-nan": Expected("fail", warning="grader 'check': the score is NaN"),
    "grader-out-of-range": Expected(
        "pass", warning="grader 'check': the score 1.7 is outside [0, 1]: clamped to 1"
    ),
    "grader-no-stdin": Expected("pass"),
    "grader-plain": Expected(
        "pass", warning=f"printed plain text, not a JSON result: {EXIT_CODE_WARNING}"
    ),
    "grader-empty": Expected(
        "pass", warning=f"printed nothing, not a JSON result: {EXIT_CODE_WARNING}"
    ),
}


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    project: Path
    report: Path
    alive: list[str]

    def explain(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-6000:]}"


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of the running processes (not zombies) that mention `text`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state not in ("Z", "X") and int(proc.name) != os.getpid():
            found.append(cmdline)
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    home = tmp_path_factory.mktemp("misbehaving")
    project = home / "project"
    shutil.copytree(FIXTURE, project)
    (project / ".git").mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", "misbehaving.eval.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("report: ")), None)
    assert line, f"exit {done.returncode}\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    report = Path(line.removeprefix("report: ")).parent
    alive = _processes_mentioning(str(project))
    return Run(done.returncode, done.stdout, done.stderr, project, report, alive)


@pytest.fixture(scope="module")
def cases(run: Run) -> dict[str, dict[str, object]]:
    rows = pq.read_table(run.report / "cases.parquet").to_pylist()
    return {str(r["test_id"]): r for r in rows}


def test_the_run_completes_every_case_and_leaves_nothing_running(
    run: Run, cases: dict[str, dict[str, object]]
) -> None:
    assert run.code == 0, run.explain()  # no threshold: failures do not change the exit code
    assert "Traceback" not in run.stderr, run.explain()
    assert sorted(cases) == sorted(CASES)
    assert run.alive == [], "\n".join(run.alive)


@pytest.mark.parametrize("test_id", CASES)
def test_each_fault_is_its_cases_error_or_warning(
    test_id: str, run: Run, cases: dict[str, dict[str, object]]
) -> None:
    expected, row = CASES[test_id], cases[test_id]
    assert row["verdict"] == expected.verdict, row
    error = str(row["error"] or "")
    if expected.error:
        assert expected.error in error, row
    else:
        assert row["error"] is None, row
    warnings = list(row["warnings"])  # type: ignore[call-overload]
    if expected.warning:
        assert len(warnings) == 1 and expected.warning in warnings[0], row
    else:
        assert warnings == [], row


def test_grader_stderr_is_kept_with_its_error(run: Run) -> None:
    graders = pq.read_table(run.report / "graders.parquet").to_pylist()
    crashed = next(g for g in graders if g["test_id"] == "grader-exit-stderr")
    assert crashed["score"] is None and crashed["verdict"] == "error"
    assert "KeyError: 'expected_output'" in crashed["stderr"]


# test id → the typed error its stored grade keeps: (stage, kind, a part of the stderr tail)
TYPED_ERRORS = {
    "agent-exit-stderr": ("agent", "exit_code", "fatal: the disk is full"),
    "agent-hang": ("agent", "timeout", ""),
    "agent-no-output": ("agent", "parse", ""),
    "agent-signal": ("agent", "crashed", ""),
    "grader-garbage": ("grade", "parse", ""),
    "grader-exit-stderr": ("grade", "exit_code", "KeyError: 'expected_output'"),
    "grader-hang": ("grade", "timeout", ""),
    "grader-signal": ("grade", "crashed", ""),
}


@pytest.mark.parametrize("test_id", TYPED_ERRORS)
def test_a_stored_grade_keeps_a_typed_error_whose_message_the_report_shows(
    test_id: str, run: Run, cases: dict[str, dict[str, object]]
) -> None:
    stage, kind, stderr_part = TYPED_ERRORS[test_id]
    tables = (run.project.parent / "storage" / "misbehaving" / "grades").glob("*/records.parquet")
    (grade,) = [
        record
        for table in tables
        for _, text in read_records(table)
        if (record := json.loads(text))["test_id"] == test_id
    ]
    error = grade["error"]
    assert (error["stage"], error["kind"]) == (stage, kind), error
    assert stderr_part in error["stderr_tail"], error
    assert grade["trials"][0]["error"] == error  # one trial: the case's error is the trial's
    assert cases[test_id]["error"] == error["message"]  # cases.parquet: the text, as before


def test_warnings_show_in_the_summary_and_the_html_report(run: Run) -> None:
    summary = (run.report / "summary.md").read_text()
    section = summary.split("## Warnings\n", 1)[1].split("\n## ", 1)[0]
    warned = sorted(t for t, e in CASES.items() if e.warning)
    assert (
        sorted(line.split(" / ")[1].split(" ")[0] for line in section.strip().splitlines())
        == warned
    )
    printed = run.stdout.split("\nWarnings:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert sorted(line.split(" / ")[1].split(":")[0] for line in printed) == warned
    html = (run.report / "report.html").read_text()
    assert html.count('class="flag warned"') == len(warned)
    assert 'data-filter="warned"' in html
    page = next((run.report / "cases").rglob("grader-plain.js")).read_text()
    detail = json.loads(page.split(", ", 1)[1].rsplit(");", 1)[0])
    assert EXIT_CODE_WARNING in detail["warnings"][0]
    assert EXIT_CODE_WARNING in detail["trials"][0]["graders"][0]["warnings"][0]


def test_the_warnings_filter_and_case_page_in_a_browser(run: Run) -> None:
    from evals_pipeline_tests.browser import headless_page

    warned = sorted(t for t, e in CASES.items() if e.warning)
    with headless_page() as browser:
        page = browser.page
        page.goto((run.report / "report.html").as_uri())
        page.wait_for_selector("#matrix")
        page.click("button[data-filter=warned]")
        assert sorted(page.locator("#matrix tbody tr:visible th").all_inner_texts()) == warned
        page.click("a.cell[data-case='agent/grader-plain']")
        page.wait_for_selector(".case-warnings")
        assert EXIT_CODE_WARNING in page.locator(".case-warnings").inner_text()
        assert page.locator(".grader .callout.warn").count() == 1
        assert browser.errors == []
