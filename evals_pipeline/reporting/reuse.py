"""How much of a report the result store served, in one line for the summary and the terminal."""

from __future__ import annotations

from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.reuse import age_text


def reuse_line(report: EvalReport) -> str | None:
    """`19 of 20 results reused ...`, or None when the run computed every result itself."""
    reused = sum(a.reused for a in report.agents)
    if not reused:
        return None
    total = sum(a.cases for a in report.agents)
    oldest = min(a.oldest_reused_ms for a in report.agents if a.oldest_reused_ms is not None)
    age = age_text(report.created_ms - oldest)
    return (
        f"{reused} of {total} results reused from earlier runs (nothing they depend on changed; "
        f"the oldest was stored {age} before this report); `--no-cache` runs them again."
    )
