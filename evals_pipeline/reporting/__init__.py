"""The reporter: figures per agent, judged rates and comparisons, Markdown, Parquet tables and
AgentV-compatible results (docs/report.md)."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.reporting.labels import HumanLabel, LabelFileError, load_labels
    from evals_pipeline.reporting.markdown import render_markdown, render_text_table
    from evals_pipeline.reporting.summary import build_report
    from evals_pipeline.reporting.writer import ReportFiles, write_report

# Each name loads its module when first used: the writer brings the page's template engine and
# Arrow's compute functions, the summary and the labels the judging and suite models (~0.5 s),
# none of which a command that only reads reports (`compare`, `runs`) or a step that only
# summarises needs.
_MODULES = {
    "HumanLabel": "labels",
    "LabelFileError": "labels",
    "load_labels": "labels",
    "render_markdown": "markdown",
    "render_text_table": "markdown",
    "build_report": "summary",
    "ReportFiles": "writer",
    "write_report": "writer",
}


__getattr__ = lazy_exports(__name__, _MODULES)


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
