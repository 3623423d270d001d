"""The report page: one self-contained HTML file rendered with Jinja2 from the package's
templates, its stylesheet, script and SVG plots inlined (no CDN, nothing fetched: it opens from
file:// and as a CI artefact)."""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from typing import Any

import jinja2

from evals_pipeline.reporting.html import plots
from evals_pipeline.reporting.html.case_files import CALLBACK
from evals_pipeline.reporting.html.context import PageContext, when

DASH = "\N{EN DASH}"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("evals_pipeline.reporting.html", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(percent=percent, usd=usd, seconds=seconds, number=number, when=when)
    return env


def percent(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:.{digits}%}"


def usd(value: float | None) -> str:
    if value is None:
        return DASH
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def seconds(ms: float | None) -> str:
    return DASH if ms is None else f"{ms / 1000:,.1f} s"


def number(value: int | float | None) -> str:
    return DASH if value is None else f"{value:,}"


def content_security_policy(script: str) -> str:
    """The page's Content-Security-Policy: its one inline script (by hash) and scripts from its
    own origin (its `cases/` files, which that script picks from the matrix), nothing else:
    no other inline script or handler, no eval, no fetch, frame, form or plugin. Styles may be
    inline (the page's stylesheet and the bars' widths)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'sha256-{digest}' 'self'",
            "style-src 'unsafe-inline'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def render_page(context: PageContext) -> str:
    """The report page as one HTML document."""
    env = environment()
    agents = [row.summary.agent for row in context.agents]
    figures: dict[str, Any] = {
        "pass_rates": plots.pass_rates(context.agents),
        "cost": plots.cost_vs_pass_rate(context.agents),
        "durations": plots.durations(context.agents),
        "dimensions": plots.dimensions(context.rates, agents),
        "trend": plots.trend(context.trend, agents),
    }
    assert env.loader is not None
    script = env.loader.get_source(env, "report.js")[0]
    style = env.loader.get_source(env, "report.css")[0]
    return env.get_template("report.html.j2").render(
        ctx=context,
        report=context.report,
        plots=figures,
        script=script,
        content_security_policy=content_security_policy(script),
        style=style,
        callback=CALLBACK,
        agent_names=agents,
    )
