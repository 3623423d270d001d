"""JUnit XML for CI: one <testsuite> per suite x agent, one <testcase> per case (docs/report.md).

A failed case carries its reason as <failure>; an errored case an <error> with the error text
and the graders' stderr in <system-err>. Each <testsuite>'s properties hold the agent's pass
rate (passed / cases, models/pass_rate.py) and its counts. Written for the JUnit schema CI systems read (Jenkins,
GitLab, GitHub test reporters).
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from evals_pipeline.models.report import EvalReport
from evals_pipeline.storage.parquet import read_parquet

# Characters XML 1.0 cannot hold (control characters from terminals, ANSI escapes' ESC).
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_CASE_COLUMNS = ["case_key", "test_id", "agent", "verdict", "score", "error", "duration_ms"]


def _text(value: object) -> str:
    return _NOT_XML.sub("?", str(value))


def _seconds(ms: int | float | None) -> str:
    return f"{(ms or 0) / 1000:.3f}"


def render_junit(reports: Sequence[tuple[EvalReport, Path]]) -> str:
    """The JUnit document for reports and their folders (cases.parquet, graders.parquet)."""
    root = ET.Element("testsuites", name="evals-pipeline")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_ms = 0.0
    host = socket.gethostname()
    for report, folder in reports:
        reasons = {(f.agent, f.test_id): f.reason for f in report.failures}
        rows = read_parquet(folder / "cases.parquet", columns=_CASE_COLUMNS).to_pylist()
        stderr = _grader_stderr(folder)
        stamp = datetime.fromtimestamp(report.created_ms / 1000, tz=UTC)
        for summary in report.agents:
            agent = summary.agent
            cases = sorted((r for r in rows if r["agent"] == agent), key=lambda r: r["test_id"])
            if not cases:
                continue
            name = f"{report.suite}.{agent}"
            failures = sum(r["verdict"] == "fail" for r in cases)
            errors = sum(r["verdict"] == "error" for r in cases)
            ms = sum(r["duration_ms"] or 0 for r in cases)
            suite = ET.SubElement(
                root,
                "testsuite",
                name=name,
                tests=str(len(cases)),
                failures=str(failures),
                errors=str(errors),
                skipped="0",
                time=_seconds(ms),
                timestamp=stamp.strftime("%Y-%m-%dT%H:%M:%S"),
                hostname=host,
                id=str(len(root)),  # counted before this suite is appended: 0, 1, ...
                package=report.suite,
            )
            properties = ET.SubElement(suite, "properties")
            rate = summary.pass_rate
            for key, value in (
                ("run_id", report.run_id),
                ("report", str(folder)),
                ("pass_rate", None if rate is None else repr(rate)),  # passed / cases
                ("pass_counts", summary.counts_text),
            ):
                ET.SubElement(properties, "property", name=key, value=_text(value or ""))
            for row in cases:
                suite.append(_testcase(name, row, reasons, stderr))
            ET.SubElement(suite, "system-out")
            ET.SubElement(suite, "system-err")
            totals["tests"] += len(cases)
            totals["failures"] += failures
            totals["errors"] += errors
            total_ms += ms
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", str(totals["errors"]))
    root.set("time", _seconds(total_ms))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(
    classname: str,
    row: dict[str, object],
    reasons: dict[tuple[str, str], str],
    stderr: dict[tuple[str, str], list[str]],
) -> ET.Element:
    agent, test_id = str(row["agent"]), str(row["test_id"])
    case = ET.Element(
        "testcase",
        classname=_text(classname),
        name=_text(test_id),
        time=_seconds(row["duration_ms"]),  # type: ignore[arg-type]
    )
    reason = _text(reasons.get((agent, test_id), f"verdict {row['verdict']}"))
    if row["verdict"] == "fail":
        failure = ET.SubElement(case, "failure", message=reason, type="quality_failure")
        failure.text = f"{reason}\nscore: {row['score']}"
    elif row["verdict"] == "error":
        error = ET.SubElement(case, "error", message=reason, type="execution_error")
        error.text = _text(row["error"] or reason)
        lines = [str(row["error"] or ""), *stderr.get((agent, str(row["case_key"])), [])]
        ET.SubElement(case, "system-err").text = _text("\n".join(x for x in lines if x))
    return case


def _grader_stderr(folder: Path) -> dict[tuple[str, str], list[str]]:
    """Each case's graders' stderr, by (agent, case key)."""
    path = folder / "graders.parquet"
    out: dict[tuple[str, str], list[str]] = {}
    if not path.exists():
        return out
    for row in read_parquet(path, columns=["agent", "case_key", "grader", "stderr"]).to_pylist():
        if row["stderr"]:
            out.setdefault((row["agent"], row["case_key"]), []).append(
                f"[{row['grader']}] {row['stderr'].rstrip()}"
            )
    return out
