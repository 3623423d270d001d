"""The reporter: figures per agent, judged rates and comparisons, Markdown, Parquet tables and
AgentV-compatible results (docs/report.md)."""

from evals_pipeline.reporting.labels import HumanLabel, LabelFileError, load_labels
from evals_pipeline.reporting.markdown import render_markdown, render_text_table
from evals_pipeline.reporting.summary import build_report
from evals_pipeline.reporting.writer import ReportFiles, write_report

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
