"""The view's addresses, built in one place: the Dagster UI's `report` link and the view's own
pages name a report by the same function, so they cannot disagree."""

from __future__ import annotations

from urllib.parse import quote

from evals_pipeline.settings import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7580
DEFAULT_VIEW_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
REPORTS = "reports"
"""The first segment of every report file's path: `/reports/<suite>/<run id>/<file>`."""
COMPARE = "compare"


def view_base(settings: Settings | None = None) -> str:
    """Where the view is served for links from elsewhere (the Dagster UI): the setting
    EVALS_PIPELINE_VIEW_URL (a shared deployment's), else the local default."""
    value = (settings or Settings.current()).view_url
    return (value or DEFAULT_VIEW_URL).rstrip("/")


def report_url(base: str, suite: str, run_id: str, name: str = "report.html") -> str:
    """The URL of one file of a report (`base` "" gives the view's own absolute path)."""
    parts = [REPORTS, suite, run_id, *name.split("/")]
    return base.rstrip("/") + "/" + "/".join(quote(p, safe="") for p in parts)


def compare_url(base: str, suite: str) -> str:
    """The compare page of a suite, where the reader picks the two runs."""
    return f"{base.rstrip('/')}/{COMPARE}/{quote(suite, safe='')}"
