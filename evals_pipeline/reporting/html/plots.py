"""The report's plots as inline SVG (drawn by hand on svg.Canvas): pass rates with their
intervals, cost against pass rate, trial durations, judged dimensions, and the pass-rate trend.
Each returns None when it has nothing to show."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import UTC, datetime

from evals_pipeline.models.history import RunEntry
from evals_pipeline.models.report import DimensionRate
from evals_pipeline.reporting.html.context import AgentRow, run_pass_rate
from evals_pipeline.reporting.html.svg import (
    INK,
    Canvas,
    nice_ticks,
    number_label,
    percent_label,
    text_width,
)
from evals_pipeline.statistics import wilson_interval

AGENT_COLOURS = ("#4f46e5", "#0891b2", "#c026d3", "#ea580c", "#65a30d", "#0f766e", "#be123c")
WIDTH = 432.0  # points: 6 inches
BAND = 24.0  # points per category row
PERCENTS = [i / 5 for i in range(6)]


def agent_colour(index: int) -> str:
    return AGENT_COLOURS[index % len(AGENT_COLOURS)]


def _left_margin(names: Sequence[str]) -> float:
    return 16 + max((text_width(name) for name in names), default=0)


def pass_rates(rows: Sequence[AgentRow]) -> str | None:
    """Pass rate per agent (passed / cases, as in the table) with its 95% Wilson interval."""
    shown = [(i, r) for i, r in enumerate(rows) if r.summary.pass_rate is not None and r.ci95]
    if not shown:
        return None
    names = [r.summary.agent for _, r in shown]
    canvas = Canvas(WIDTH, 50 + BAND * len(shown), left=_left_margin(names))
    canvas.scale_x(0, 1)
    canvas.scale_y(-0.5, len(shown) - 0.5, downward=True)
    canvas.title("Pass rate, 95% interval")
    canvas.x_axis(PERCENTS, percent_label)
    canvas.categories(names)
    for y, (i, row) in enumerate(shown):
        rate = row.summary.pass_rate or 0.0
        low, high = row.ci95 or (rate, rate)
        middle, half = canvas.y(y), BAND * 0.55 / 2
        canvas.rect(
            canvas.x(0), middle - half, canvas.x(rate), middle + half, agent_colour(i), 0.85
        )
        canvas.interval(min(low, rate), max(high, rate), middle, INK)
        inside = rate >= 0.15
        canvas.text(
            canvas.x(0.015 if inside else rate + 0.015), middle + 3, f"{rate:.0%}",
            colour="white" if inside else INK, weight="bold",
        )  # fmt: skip
    return canvas.svg("Pass rate per agent")


def cost_vs_pass_rate(rows: Sequence[AgentRow]) -> str | None:
    """Each agent's total cost against its pass rate: the cheaper and better, the more up-left."""
    shown = [
        (i, r, r.summary.cost_usd)
        for i, r in enumerate(rows)
        if r.summary.pass_rate is not None and r.summary.cost_usd is not None
    ]
    if not shown or not any(cost for _, _, cost in shown):
        return None
    ticks = nice_ticks(max(cost for _, _, cost in shown) * 1.25)
    canvas = Canvas(WIDTH, 216, left=36, bottom=34, right=16)
    canvas.scale_x(0, ticks[-1])
    canvas.scale_y(-0.03, 1.05)
    canvas.title("Cost vs pass rate")
    canvas.y_axis(PERCENTS, percent_label)
    canvas.x_axis(ticks, number_label, "cost (USD)")
    for i, row, cost in shown:
        rate = row.summary.pass_rate or 0.0
        low, high = row.ci95 or (rate, rate)
        x, colour = canvas.x(cost), agent_colour(i)
        canvas.interval(min(low, rate), max(high, rate), x, colour, vertical=True)
        canvas.dot(x, canvas.y(rate), colour)
        canvas.text(x + 7, canvas.y(rate) - 4, row.summary.agent, colour=INK)
    return canvas.svg("Cost against pass rate per agent")


def durations(rows: Sequence[AgentRow]) -> str | None:
    """Each agent's trial durations: a box per agent (quartiles, whiskers to the furthest trial
    within 1.5 box lengths) with every trial as a dot."""
    shown = [(i, r) for i, r in enumerate(rows) if r.durations_ms]
    if not shown:
        return None
    names = [r.summary.agent for _, r in shown]
    data = [sorted(d / 1000 for d in r.durations_ms) for _, r in shown]
    ticks = nice_ticks(max(v[-1] for v in data))
    canvas = Canvas(WIDTH, 60 + BAND * len(shown), left=_left_margin(names), bottom=34)
    canvas.scale_x(0, ticks[-1])
    canvas.scale_y(-0.5, len(shown) - 0.5, downward=True)
    canvas.title("Duration")
    canvas.x_axis(ticks, number_label, "seconds per trial")
    canvas.categories(names)
    for y, ((i, _), values) in enumerate(zip(shown, data, strict=True)):
        colour, middle, half = agent_colour(i), canvas.y(y), BAND * 0.5 / 2
        q1, median, q3 = _quartiles(values)
        reach = 1.5 * (q3 - q1)
        low = min(v for v in values if v >= q1 - reach)
        high = max(v for v in values if v <= q3 + reach)
        for end, edge in ((low, q1), (high, q3)):
            canvas.line(canvas.x(end), middle, canvas.x(edge), middle, colour, 1.0)
            canvas.line(canvas.x(end), middle - half / 2, canvas.x(end), middle + half / 2, colour)
        canvas.box(canvas.x(q1), middle - half, canvas.x(q3), middle + half, colour)
        canvas.line(canvas.x(median), middle - half, canvas.x(median), middle + half, INK, 1.2)
        for k, value in enumerate(values):
            jitter = ((k * 37) % 21 - 10) / 60 * BAND
            canvas.dot(canvas.x(value), middle + jitter, colour, 1.8)
    return canvas.svg("Trial durations per agent")


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """First quartile, median and third quartile, interpolated as numpy's percentile does."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def dimensions(rates: Sequence[DimensionRate], agents: Sequence[str]) -> str | None:
    """Judged dimensions per agent: the corrected rate and its interval when labels allow one,
    else the observed rate with its Wilson interval (hollow marker)."""
    shown = [r for r in rates if r.n > 0 and r.agent in agents]
    if not shown:
        return None
    names = list(dict.fromkeys(r.dimension for r in shown))
    ran = [a for a in agents if any(r.agent == a for r in shown)]
    canvas = Canvas(WIDTH, 64 + BAND * len(names), left=_left_margin(names), bottom=40)
    canvas.scale_x(0, 1.02)
    canvas.scale_y(-0.5, len(names) - 0.5, downward=True)
    canvas.title("Judged dimensions, 95% interval")
    canvas.x_axis(PERCENTS, percent_label)
    canvas.categories(names)
    step = 0.7 / max(len(ran), 1)
    for j, agent in enumerate(ran):
        colour = agent_colour(list(agents).index(agent))
        for k, name in enumerate(names):
            rate = next((r for r in shown if r.agent == agent and r.dimension == name), None)
            if rate is None:
                continue
            y = canvas.y(k + (j - (len(ran) - 1) / 2) * step)
            if rate.corrected_rate is not None:
                value, (low, high) = rate.corrected_rate, (rate.ci95_low, rate.ci95_high)
            else:
                value = rate.observed_rate or 0.0
                low, high = wilson_interval(rate.n_passed, rate.n)
            canvas.interval(min(low, value), max(high, value), y, colour)
            canvas.dot(canvas.x(value), y, colour, 3.0, hollow=rate.corrected_rate is None)
    legend = [(agent, agent_colour(list(agents).index(agent))) for agent in ran]
    canvas.legend(legend, canvas.height - 8)
    return canvas.svg("Judged dimensions per agent")


def trend(entries: Sequence[RunEntry], agents: Sequence[str]) -> str | None:
    """Pass rate per agent over the suite's last reports, oldest first."""
    if len(entries) < 2:
        return None
    labels = [
        datetime.fromtimestamp(e.created_ms / 1000, tz=UTC).strftime("%m-%d\n%H:%M")
        for e in entries
    ]
    names = list(dict.fromkeys([*agents, *(f.agent for e in entries for f in e.agents)]))
    canvas = Canvas(WIDTH * 2, 202, left=36, bottom=48)
    canvas.scale_x(-0.3, len(entries) - 0.7)
    canvas.scale_y(-0.03, 1.05)
    canvas.title(f"Pass rate over the last {len(entries)} runs")
    canvas.y_axis(PERCENTS, percent_label)
    bottom = canvas.area[3]
    for x, label in enumerate(labels):
        canvas.text(canvas.x(x), bottom + 11, label, anchor="middle", size=7)
    legend = []
    for i, agent in enumerate(names):
        rates = [(x, run_pass_rate(e, agent)) for x, e in enumerate(entries)]
        points = [(x, rate) for x, rate in rates if rate is not None]
        if not points:
            continue
        colour = agent_colour(i)
        canvas.polyline([(canvas.x(x), canvas.y(rate)) for x, rate in points], colour)
        for x, rate in points:
            title = f"{agent} · {labels[x].replace(chr(10), ' ')} · {rate:.1%}"
            canvas.dot(canvas.x(x), canvas.y(rate), colour, 2.5, title=title)
        legend.append((agent, colour))
    canvas.legend(legend, canvas.height - 6)
    return canvas.svg("Pass rate per agent over the last runs")
