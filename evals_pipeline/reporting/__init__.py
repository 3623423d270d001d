"""The reporter: figures per agent, judged rates and comparisons, Markdown, Parquet tables and
AgentV-compatible results (docs/report.md)."""

from typing import TYPE_CHECKING, Any

from evals_pipeline.reporting.labels import HumanLabel, LabelFileError, load_labels
from evals_pipeline.reporting.markdown import render_markdown, render_text_table
from evals_pipeline.reporting.summary import build_report

if TYPE_CHECKING:
    from evals_pipeline.reporting.writer import ReportFiles, write_report


def __getattr__(name: str) -> Any:
    # The writer brings the page's template engine and Arrow's compute functions: loaded when
    # a report is written, not whenever a run (or a step that only summarises) starts.
    if name in ("ReportFiles", "write_report"):
        from evals_pipeline.reporting import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "HumanLabel",
    "LabelFileError",
    "ReportFiles",
    "build_report",
    "load_labels",
    "render_markdown",
    "render_text_table",
    "write_report",
]
