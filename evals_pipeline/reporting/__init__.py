"""The reporter: figures per agent, Markdown, Parquet tables and AgentV-compatible results."""

from evals_pipeline.reporting.markdown import render_markdown, render_text_table
from evals_pipeline.reporting.summary import build_report
from evals_pipeline.reporting.writer import ReportFiles, write_report

__all__ = ["ReportFiles", "build_report", "render_markdown", "render_text_table", "write_report"]
