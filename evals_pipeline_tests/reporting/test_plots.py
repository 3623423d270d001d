"""The report's hand-drawn SVG plots: where their marks land, the numbers they are drawn from,
and names shown as text, never as markup."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from evals_pipeline.models.report import AgentSummary
from evals_pipeline.reporting.html import plots
from evals_pipeline.reporting.html.context import AgentRow
from evals_pipeline.reporting.html.svg import Canvas, nice_ticks, number_label
from evals_pipeline_tests.reporting.test_html_report import entry

SVG = "{http://www.w3.org/2000/svg}"


def row(agent: str, rate: float, ci: tuple[float, float], cost: float, *took: int) -> AgentRow:
    summary = AgentSummary.model_validate(
        {"agent": agent, "cases": 10, "passed": round(rate * 10), "failed": 10 - round(rate * 10),
         "errors": 0, "mean_score": rate, "cost_usd": cost}
    )  # fmt: skip
    return AgentRow(summary=summary, ci95=ci, corrected=None, durations_ms=took)


def parsed(svg: str | None) -> ET.Element:
    assert svg is not None
    return ET.fromstring(svg)


def test_a_bar_reaches_its_rate_and_its_interval_spans_the_wilson_bounds() -> None:
    svg = parsed(plots.pass_rates([row("claude", 0.5, (0.25, 0.75), 1.0)]))
    canvas_x = [
        float(t.get("x", 0)) for t in svg.iter(f"{SVG}text") if t.findtext(f"{SVG}tspan") == "0%"
    ]
    full_x = [
        float(t.get("x", 0)) for t in svg.iter(f"{SVG}text") if t.findtext(f"{SVG}tspan") == "100%"
    ]
    zero, hundred = canvas_x[0], full_x[0]
    bar = next(svg.iter(f"{SVG}rect"))
    assert float(bar.get("x", 0)) == pytest.approx(zero, abs=0.1)
    assert float(bar.get("width", 0)) == pytest.approx((hundred - zero) / 2, abs=0.2)
    ends = {round(float(line.get("x1", 0)), 1) for line in svg.iter(f"{SVG}line")}
    assert round(zero + (hundred - zero) * 0.25, 1) in ends
    assert round(zero + (hundred - zero) * 0.75, 1) in ends
    assert svg.get("class") == "plot" and svg.get("aria-label") == "Pass rate per agent"
    assert "50%" in {t.findtext(f"{SVG}tspan") for t in svg.iter(f"{SVG}text")}


def test_names_are_text_not_markup() -> None:
    hostile = '<script>alert("x")</script>'
    svg = plots.cost_vs_pass_rate([row(hostile, 0.5, (0.2, 0.8), 0.5)])
    assert svg is not None and "<script>" not in svg
    labels = {t.findtext(f"{SVG}tspan") for t in parsed(svg).iter(f"{SVG}text")}
    assert hostile in labels


@pytest.mark.parametrize("values", [[3.0], [1.0, 2.0], [5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0]])
def test_a_duration_box_spans_numpys_quartiles(values: list[float]) -> None:
    assert plots._quartiles(sorted(values)) == pytest.approx(
        tuple(np.percentile(values, [25, 50, 75]))
    )


def test_every_plot_is_drawn_or_left_out_and_parses_as_svg() -> None:
    rows = [
        row("claude", 0.7, (0.4, 0.9), 0.04, 1500, 2500, 900),
        row("codex", 0.0, (0.0, 0.3), 0.0, 400),
    ]
    for svg in (plots.pass_rates(rows), plots.cost_vs_pass_rate(rows), plots.durations(rows)):
        assert parsed(svg).tag == f"{SVG}svg"
    assert plots.trend([entry(1, 0.5, 0.5)], ["claude"]) is None  # one run: no trend yet
    trend = parsed(plots.trend([entry(1, 0.5, 0.5), entry(86_400_000, 1.0, 0.0)], ["claude"]))
    assert len(list(trend.iter(f"{SVG}polyline"))) == 2
    assert plots.durations([row("idle", 0.5, (0.1, 0.9), 0.0)]) is None


def test_ticks_are_round_and_cover_the_data() -> None:
    assert nice_ticks(0.05) == pytest.approx([0.0, 0.01, 0.02, 0.03, 0.04, 0.05])
    assert nice_ticks(7.3) == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert nice_ticks(0) == [0.0, 1.0]
    assert [number_label(v) for v in (0.0, 0.5, 2.0, 0.03)] == ["0", "0.5", "2", "0.03"]
    canvas = Canvas(100, 100, left=10, right=10)
    canvas.scale_x(0, 4)
    assert canvas.x(2) == pytest.approx(50)
    assert re.search(r'viewBox="0 0 100 100"', canvas.svg("empty"))
