"""The report's plots as inline SVG, drawn by matplotlib (imported only when a page is drawn).

Text stays text (`svg.fonttype: none`) so it is crisp, selectable and takes the page's font;
each plot gets its own hash salt, so its element ids are stable and unique within the page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evals_pipeline.models.history import RunEntry
from evals_pipeline.models.report import DimensionRate
from evals_pipeline.reporting.html.context import AgentRow
from evals_pipeline.statistics import wilson_interval

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

AGENT_COLOURS = ("#4f46e5", "#0891b2", "#c026d3", "#ea580c", "#65a30d", "#0f766e", "#be123c")
INK, MUTED, GRID = "#1f2937", "#6b7280", "#e5e7eb"
STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "axes.edgecolor": GRID,
    "axes.labelcolor": MUTED,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlecolor": INK,
    "axes.titlelocation": "left",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "axes.grid": True,
    "grid.color": GRID,
    "grid.linewidth": 0.6,
}


def agent_colour(index: int) -> str:
    return AGENT_COLOURS[index % len(AGENT_COLOURS)]


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.add_subplot()
    axes.set_axisbelow(True)
    return figure, axes


def _svg(figure: Figure, name: str, label: str) -> str:
    """The figure as an <svg> element that scales to its container."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": name}):
        figure.savefig(buffer, format="svg", transparent=True)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    head, rest = text.split(">", 1)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    # The font follows the page; matplotlib names the one it measured with.
    rest = rest.replace("font-family: 'DejaVu Sans'", "font-family: inherit")
    rest = re.sub(r"font-family=\"[^\"]*\"", 'font-family="inherit"', rest)
    return f'{head} class="plot" role="img" aria-label="{label}">{rest}'


def _draw(name: str, label: str, width: float, height: float, draw: Any) -> str:
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure, axes = _figure(width, height)
        draw(axes)
        return _svg(figure, name, label)


def pass_rates(rows: Sequence[AgentRow]) -> str | None:
    """Pass rate per agent with its 95% Wilson interval (errors excluded, as in the table)."""
    shown = [(i, r) for i, r in enumerate(rows) if r.summary.pass_rate is not None and r.ci95]

    if not shown:
        return None

    def draw(axes: Axes) -> None:
        for y, (i, row) in enumerate(shown):
            rate = row.summary.pass_rate or 0.0
            low, high = row.ci95 or (rate, rate)
            colour = agent_colour(i)
            axes.barh(y, rate, height=0.55, color=colour, alpha=0.85)
            axes.errorbar(
                rate, y, xerr=_spread(rate, low, high), fmt="none", ecolor=INK,
                elinewidth=1.2, capsize=4,
            )  # fmt: skip
            inside = rate >= 0.15
            axes.text(
                0.015 if inside else rate + 0.015, y, f"{rate:.0%}", va="center", ha="left",
                color="white" if inside else INK, fontsize=9, fontweight="bold",
            )  # fmt: skip
        axes.set_yticks(range(len(shown)), [r.summary.agent for _, r in shown])
        axes.invert_yaxis()
        axes.set_xlim(0, 1)
        axes.xaxis.set_major_formatter(_percent())
        axes.grid(axis="y", visible=False)
        axes.set_title("Pass rate, 95% interval")

    return _draw("pass-rates", "Pass rate per agent", 6.0, 0.9 + 0.5 * len(shown), draw)


def cost_vs_pass_rate(rows: Sequence[AgentRow]) -> str | None:
    """Each agent's total cost against its pass rate: the cheaper and better, the more up-left."""
    shown = [(i, r) for i, r in enumerate(rows) if r.summary.pass_rate is not None]
    if not shown or not any(r.summary.cost_usd for _, r in shown):
        return None

    def draw(axes: Axes) -> None:
        for i, row in shown:
            rate = row.summary.pass_rate or 0.0
            low, high = row.ci95 or (rate, rate)
            axes.errorbar(
                row.summary.cost_usd, rate, yerr=_spread(rate, low, high), fmt="o",
                color=agent_colour(i), ecolor=agent_colour(i), elinewidth=1, capsize=3,
                markersize=7,
            )  # fmt: skip
            axes.annotate(
                row.summary.agent, (row.summary.cost_usd, rate), xytext=(7, 4),
                textcoords="offset points", color=INK, fontsize=9,
            )  # fmt: skip
        axes.set_ylim(-0.03, 1.05)
        axes.set_xlim(left=0)
        axes.margins(x=0.25)
        axes.yaxis.set_major_formatter(_percent())
        axes.set_xlabel("cost (USD)")
        axes.set_title("Cost vs pass rate")

    return _draw("cost-vs-pass", "Cost against pass rate per agent", 6.0, 3.0, draw)


def durations(rows: Sequence[AgentRow]) -> str | None:
    """Each agent's trial durations: a box per agent with every trial as a dot."""
    shown = [(i, r) for i, r in enumerate(rows) if r.durations_ms]
    if not shown:
        return None

    def draw(axes: Axes) -> None:
        data = [[d / 1000 for d in r.durations_ms] for _, r in shown]
        boxes = axes.boxplot(
            data, orientation="horizontal", widths=0.5, patch_artist=True, showfliers=False,
            medianprops={"color": INK},
        )  # fmt: skip
        for box, (i, _) in zip(boxes["boxes"], shown, strict=True):
            box.set(facecolor=agent_colour(i), alpha=0.25, edgecolor=agent_colour(i))
        for y, ((i, _), values) in enumerate(zip(shown, data, strict=True), start=1):
            jitter = [y + ((k * 37) % 21 - 10) / 60 for k in range(len(values))]
            axes.scatter(values, jitter, s=9, color=agent_colour(i), alpha=0.8, linewidths=0)
        axes.set_yticks(range(1, len(shown) + 1), [r.summary.agent for _, r in shown])
        axes.invert_yaxis()
        axes.set_xlim(left=0)
        axes.set_xlabel("seconds per trial")
        axes.grid(axis="y", visible=False)
        axes.set_title("Duration")

    return _draw("durations", "Trial durations per agent", 6.0, 1.0 + 0.5 * len(shown), draw)


def dimensions(rates: Sequence[DimensionRate], agents: Sequence[str]) -> str | None:
    """Judged dimensions per agent: the corrected rate and its interval when labels allow one,
    else the observed rate with its Wilson interval (hollow marker)."""
    shown = [r for r in rates if r.n > 0 and r.agent in agents]
    if not shown:
        return None
    names = list(dict.fromkeys(r.dimension for r in shown))
    ran = [a for a in agents if any(r.agent == a for r in shown)]

    def draw(axes: Axes) -> None:
        step = 0.7 / max(len(ran), 1)
        for j, agent in enumerate(ran):
            colour = agent_colour(list(agents).index(agent))
            for k, name in enumerate(names):
                rate = next((r for r in shown if r.agent == agent and r.dimension == name), None)
                if rate is None:
                    continue
                y = k + (j - (len(ran) - 1) / 2) * step
                if rate.corrected_rate is not None:
                    value, (low, high) = rate.corrected_rate, (rate.ci95_low, rate.ci95_high)
                    face = colour
                else:
                    value = rate.observed_rate or 0.0
                    low, high = wilson_interval(rate.n_passed, rate.n)
                    face = "white"
                axes.errorbar(
                    value, y, xerr=_spread(value, low, high), fmt="o", color=colour,
                    markerfacecolor=face, ecolor=colour, elinewidth=1.2, capsize=3, markersize=6,
                    label=agent if k == 0 else None,
                )  # fmt: skip
        axes.set_yticks(range(len(names)), names)
        axes.invert_yaxis()
        axes.set_xlim(0, 1.02)
        axes.xaxis.set_major_formatter(_percent())
        axes.grid(axis="y", visible=False)
        axes.legend(
            loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False, fontsize=8,
            ncols=len(ran),
        )  # fmt: skip
        axes.set_title("Judged dimensions, 95% interval")

    return _draw("dimensions", "Judged dimensions per agent", 6.0, 1.3 + 0.5 * len(names), draw)


def trend(entries: Sequence[RunEntry], agents: Sequence[str]) -> str | None:
    """Pass rate per agent over the suite's last reports, oldest first."""
    if len(entries) < 2:
        return None
    from datetime import UTC, datetime

    labels = [
        datetime.fromtimestamp(e.created_ms / 1000, tz=UTC).strftime("%m-%d\n%H:%M")
        for e in entries
    ]
    names = list(dict.fromkeys([*agents, *(f.agent for e in entries for f in e.agents)]))

    def draw(axes: Axes) -> None:
        for i, agent in enumerate(names):
            points = [
                (x, f.pass_rate)
                for x, e in enumerate(entries)
                for f in e.agents
                if f.agent == agent and f.pass_rate is not None and f.cases > 0
            ]
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            axes.plot(xs, ys, marker="o", markersize=4, color=agent_colour(i), label=agent)
        axes.set_xticks(range(len(entries)), labels, fontsize=7)
        axes.set_ylim(-0.03, 1.05)
        axes.yaxis.set_major_formatter(_percent())
        axes.legend(loc="lower left", frameon=False, fontsize=8, ncols=min(len(names), 4))
        axes.set_title(f"Pass rate over the last {len(entries)} runs")

    return _draw("trend", "Pass rate per agent over the last runs", 12.0, 2.8, draw)


def _spread(value: float, low: float, high: float) -> list[list[float]]:
    """Error bar lengths below and above `value`; an interval that misses the point (a clipped
    corrected rate, float rounding at 0% or 100%) draws no bar on that side."""
    return [[max(0.0, value - low)], [max(0.0, high - value)]]


def _percent() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1, decimals=0)
