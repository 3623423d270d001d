"""The view's own pages, rendered with Jinja2 (every value escaped: report contents are
untrusted, docs/security.md): the runs list and the comparison of two runs. The figures are
those `evals-pipeline runs` and `compare` print, from the same functions."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import jinja2

from evals_pipeline.models.history import RunComparison, RunEntry
from evals_pipeline.reporting.history_text import DELTA_HEADERS, change_line, delta_row, run_label
from evals_pipeline.reporting.text import pct
from evals_pipeline.view.links import compare_url, report_url

CHANGE_KINDS = ("regressed", "fixed", "new", "removed")

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""The view's pages run no script at all; their one form submits to the view."""


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("evals_pipeline.view", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(report_url=report_url, compare_url=compare_url)
    env.filters.update(
        when=when, run_name=run_name, suite_name=suite_name, pct=pct, label=run_label
    )
    return env


def when(created_ms: int) -> str:
    """A report's time as `evals-pipeline runs` prints it (UTC)."""
    return datetime.fromtimestamp(created_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def run_name(entry: RunEntry) -> str:
    """The run's segment in the view's URLs: its report folder's name (the run id)."""
    return Path(entry.folder).name


def suite_name(entry: RunEntry) -> str:
    """The suite's segment in the view's URLs: its folder's name in the storage root."""
    return Path(entry.folder).parents[1].name


def runs_page(root_label: str, entries: list[RunEntry]) -> str:
    """Every report, newest first, with its agents' pass rates and links."""
    newest = sorted(entries, key=lambda e: (e.created_ms, e.folder), reverse=True)
    suites = sorted({suite_name(e) for e in entries})
    return (
        environment()
        .get_template("runs.html.j2")
        .render(title="Runs", root=root_label, entries=newest, suites=suites)
    )


def compare_page(
    suite: str,
    entries: list[RunEntry],
    before: RunEntry | None,
    after: RunEntry | None,
    comparison: RunComparison | None,
    problem: str | None = None,
) -> str:
    """The suite's two-select form, and the comparison of the runs it names."""
    changes = {
        kind: [change_line(c) for c in comparison.changes if c.change == kind]
        for kind in CHANGE_KINDS
    } if comparison else {}  # fmt: skip
    return (
        environment()
        .get_template("compare.html.j2")
        .render(
            title=f"Compare {suite}",
            suite=suite,
            entries=list(reversed(entries)),
            before=before,
            after=after,
            comparison=comparison,
            headers=DELTA_HEADERS,
            rows=[delta_row(a) for a in comparison.agents] if comparison else [],
            changes=changes,
            problem=problem,
        )
    )


def message_page(title: str, message: str) -> str:
    """A page saying what is missing (an unknown suite or run, an empty storage root)."""
    return environment().get_template("message.html.j2").render(title=title, message=message)
