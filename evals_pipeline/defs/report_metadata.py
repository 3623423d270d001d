"""What an eval_report materialization shows in the Dagster UI: the report as a link, its
per-agent table and its failures as Dagster tables, and per-agent figures (which Dagster plots
over materializations) for the agents that ran (docs/dagster-ui.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dagster as dg

from evals_pipeline.models.pass_rate import PASS_RATE, PASS_RATE_GRADED
from evals_pipeline.models.report import EvalReport
from evals_pipeline.reporting import render_markdown
from evals_pipeline.view.links import report_url, view_base

if TYPE_CHECKING:
    from evals_pipeline.reporting import ReportFiles

MAX_FAILURE_ROWS = 500
"""Failures listed in the table; the rest are in the report (a UI table is for reading)."""

AGENTS_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("agent", "string"),
        dg.TableColumn("cases", "int"),
        dg.TableColumn("passed", "int"),
        dg.TableColumn("failed", "int"),
        dg.TableColumn("errors", "int"),
        dg.TableColumn("pass_rate", "float", description=PASS_RATE),
        dg.TableColumn("pass_rate_graded", "float", description=PASS_RATE_GRADED),
        dg.TableColumn("mean_score", "float", description="over cases that did not error"),
        dg.TableColumn("cost_usd", "float"),
        dg.TableColumn("tokens", "int"),
        dg.TableColumn("mean_duration_s", "float"),
    ]
)

FAILURES_SCHEMA = dg.TableSchema(
    columns=[
        dg.TableColumn("agent", "string"),
        dg.TableColumn("test_id", "string"),
        dg.TableColumn("verdict", "string", description="fail or error"),
        dg.TableColumn("reason", "string"),
    ]
)


def report_page(files: ReportFiles) -> str:
    """The page to open, in `evals-pipeline view` (an http URL: a browser opens no file:// link
    from the UI's page) at EVALS_PIPELINE_VIEW_URL: the HTML report when this build writes one,
    else the Markdown summary."""
    html = files.folder / "report.html"
    name = html.name if html.is_file() else files.summary_md.name
    # The folder is <root>/<suite>/eval_report/<run id>, as the view finds reports.
    return report_url(view_base(), files.folder.parents[1].name, files.folder.name, name)


def agents_table(report: EvalReport) -> dg.TableMetadataValue:
    """One row per agent that ran."""
    rows = [
        dg.TableRecord(
            {
                "agent": a.agent,
                "cases": a.cases,
                "passed": a.passed,
                "failed": a.failed,
                "errors": a.errors,
                "pass_rate": a.pass_rate,
                "pass_rate_graded": a.pass_rate_graded,
                "mean_score": a.mean_score,
                "cost_usd": a.cost_usd,
                "tokens": a.total_tokens,
                "mean_duration_s": (
                    round(a.mean_duration_ms / 1000, 3) if a.mean_duration_ms is not None else None
                ),
            }
        )
        for a in report.agents
        if a.cases
    ]
    return dg.MetadataValue.table(rows, schema=AGENTS_SCHEMA)


def failures_table(report: EvalReport) -> dg.TableMetadataValue:
    """Every failed or errored (case, agent) with its reason, up to MAX_FAILURE_ROWS."""
    rows = [
        dg.TableRecord(
            {"agent": f.agent, "test_id": f.test_id, "verdict": f.verdict, "reason": f.reason}
        )
        for f in report.failures[:MAX_FAILURE_ROWS]
    ]
    return dg.MetadataValue.table(rows, schema=FAILURES_SCHEMA)


def report_metadata(report: EvalReport, files: ReportFiles) -> dict[str, Any]:
    """The eval_report materialization's metadata."""
    metadata: dict[str, Any] = {
        "dagster/uri": str(files.folder),
        "report": dg.MetadataValue.url(report_page(files)),
        "summary": dg.MetadataValue.md(render_markdown(report)),
        "agents": agents_table(report),
        "failures": failures_table(report),
        "not_run": report.not_run,
    }
    # Only agents that ran: an agent with no case in this report would plot as zeros.
    for a in report.agents:
        if not a.cases:
            continue
        metadata.update(
            {
                f"{a.agent}/passed": a.passed,
                f"{a.agent}/failed": a.failed,
                f"{a.agent}/errors": a.errors,
            }
        )
        if a.pass_rate is not None:
            metadata[f"{a.agent}/pass_rate"] = a.pass_rate
        if a.mean_score is not None:
            metadata[f"{a.agent}/mean_score"] = a.mean_score
    return metadata
