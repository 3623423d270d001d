"""The HTML report: `report.html`, self-contained, beside summary.md and report.json, and one
small script per (case, agent) under `cases/` that its case pages load on demand, carried over
from the previous report when unchanged (docs/report.md, "report.html")."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.reporting.html.report import (
        write_case_pages,
        write_html_report,
        write_page,
    )

# Loaded on first use: the page modules import their siblings, which would loop back through an
# `__init__` that imported them eagerly.
_MODULES = {
    "write_case_pages": "report",
    "write_html_report": "report",
    "write_page": "report",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = ["write_case_pages", "write_html_report", "write_page"]
