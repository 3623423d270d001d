"""A plot drawn as inline SVG by hand: a canvas with linear scales, ticks and grid lines, and
the few marks the report's plots use (bars, interval bars, dots, boxes, lines, text, a legend).

Drawing five small plots this way takes milliseconds; a plotting library took ~1 s of every
report (its import and its layout engine). Coordinates are points; the SVG has a viewBox and
no size, so it scales to its container, and its text is text in the page's font.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

INK, MUTED, GRID = "#1f2937", "#6b7280", "#e5e7eb"
FONT_SIZE = 9
TITLE_SIZE = 10
CHAR_WIDTH = 0.56  # of the font size: an average glyph's width, to leave room for labels


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Roughly how wide `text` is drawn, in points (for margins, not exact layout)."""
    return len(text) * size * CHAR_WIDTH


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 past `high`: steps of 1, 2 or 5 times a power of ten."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def number_label(value: float) -> str:
    """A tick's number: no trailing zeros, no exponent for the report's magnitudes."""
    return f"{value:.6f}".rstrip("0").rstrip(".") if value else "0"


def percent_label(value: float) -> str:
    return f"{value:.0%}"


@dataclass(frozen=True)
class Scale:
    """Data values from `low` to `high` onto points from `start` to `end`."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


class Canvas:
    """One plot: a title above a plotting area framed by margins for the axes' labels."""

    def __init__(
        self,
        width: float,
        height: float,
        *,
        left: float,
        bottom: float = 24.0,
        top: float = 24.0,
        right: float = 14.0,
    ) -> None:
        self.width, self.height = width, height
        self.area = (left, top, width - right, height - bottom)  # x0, y0, x1, y1
        self.parts: list[str] = []
        self.x = Scale(0.0, 1.0, left, width - right)
        self.y = Scale(0.0, 1.0, top, height - bottom)

    def scale_x(self, low: float, high: float) -> None:
        self.x = Scale(low, high, self.area[0], self.area[2])

    def scale_y(self, low: float, high: float, *, downward: bool = False) -> None:
        """Values up the area (a value axis), or down it (`downward`: categories, first on
        top)."""
        top, bottom = self.area[1], self.area[3]
        self.y = Scale(low, high, top, bottom) if downward else Scale(low, high, bottom, top)

    def title(self, text: str) -> None:
        self.text(self.area[0], 14, text, size=TITLE_SIZE, weight="bold", colour=INK)

    def x_axis(
        self, ticks: Sequence[float], label: Callable[[float], str], name: str | None = None
    ) -> None:
        """Ticks along the bottom with vertical grid lines, and the axis' name under them."""
        x0, y0, x1, y1 = self.area
        for value in ticks:
            x = self.x(value)
            self.line(x, y0, x, y1, GRID, 0.6)
            self.text(x, y1 + 11, label(value), anchor="middle")
        self.line(x0, y1, x1, y1, GRID, 0.8)
        if name:
            self.text((x0 + x1) / 2, y1 + 22, name, anchor="middle")

    def y_axis(self, ticks: Sequence[float], label: Callable[[float], str]) -> None:
        """Ticks up the left side with horizontal grid lines."""
        x0, _, x1, _ = self.area
        for value in ticks:
            y = self.y(value)
            self.line(x0, y, x1, y, GRID, 0.6)
            self.text(x0 - 4, y + 3, label(value), anchor="end")
        self.line(x0, self.area[1], x0, self.area[3], GRID, 0.8)

    def categories(self, names: Sequence[str]) -> None:
        """Category names on the left, one at each whole value of the (downward) y scale."""
        for index, name in enumerate(names):
            self.text(self.area[0] - 5, self.y(index) + 3, name, anchor="end")
        self.line(self.area[0], self.area[1], self.area[0], self.area[3], GRID, 0.8)

    def rect(
        self, x0: float, y0: float, x1: float, y1: float, fill: str, opacity: float = 1.0
    ) -> None:
        self.parts.append(
            f'<rect x="{min(x0, x1):.1f}" y="{min(y0, y1):.1f}" width="{abs(x1 - x0):.1f}" '
            f'height="{abs(y1 - y0):.1f}" fill="{fill}" fill-opacity="{opacity:g}"/>'
        )

    def box(self, x0: float, y0: float, x1: float, y1: float, colour: str) -> None:
        """A filled, outlined box (a box plot's quartiles)."""
        self.parts.append(
            f'<rect x="{min(x0, x1):.1f}" y="{min(y0, y1):.1f}" width="{abs(x1 - x0):.1f}" '
            f'height="{abs(y1 - y0):.1f}" fill="{colour}" fill-opacity="0.25" '
            f'stroke="{colour}" stroke-width="1"/>'
        )

    def line(
        self, x0: float, y0: float, x1: float, y1: float, colour: str, width: float = 1.0
    ) -> None:
        self.parts.append(
            f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
            f'stroke="{colour}" stroke-width="{width:g}"/>'
        )

    def interval(
        self, low: float, high: float, at: float, colour: str, *, vertical: bool = False
    ) -> None:
        """An error bar with caps from data `low` to `high`, at point `at` across it."""
        cap = 3.5
        if vertical:
            y0, y1 = self.y(low), self.y(high)
            self.line(at, y0, at, y1, colour, 1.1)
            for y in (y0, y1):
                self.line(at - cap, y, at + cap, y, colour, 1.1)
        else:
            x0, x1 = self.x(low), self.x(high)
            self.line(x0, at, x1, at, colour, 1.1)
            for x in (x0, x1):
                self.line(x, at - cap, x, at + cap, colour, 1.1)

    def dot(
        self,
        x: float,
        y: float,
        colour: str,
        radius: float = 3.5,
        *,
        hollow: bool = False,
        title: str | None = None,
    ) -> None:
        """A dot; `title` is what a reader sees hovering it (the figure it stands for)."""
        fill = "white" if hollow else colour
        end = f"><title>{escape(title)}</title></circle>" if title else "/>"
        self.parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:g}" fill="{fill}" '
            f'stroke="{colour}" stroke-width="1.2"{end}'
        )

    def polyline(self, points: Sequence[tuple[float, float]], colour: str) -> None:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
        )

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        anchor: str = "start",
        colour: str = MUTED,
        size: float = FONT_SIZE,
        weight: str = "normal",
    ) -> None:
        lines = text.split("\n")
        spans = "".join(
            f'<tspan x="{x:.1f}" dy="{0 if i == 0 else size * 1.15:.1f}">{escape(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{colour}" '
            f'font-size="{size:g}" font-weight="{weight}">{spans}</text>'
        )

    def legend(self, items: Sequence[tuple[str, str]], y: float) -> None:
        """Coloured dots with names in a row from the area's left, at `y`."""
        x = self.area[0]
        for name, colour in items:
            self.dot(x + 4, y - 3, colour, 3.0)
            self.text(x + 11, y, name, colour=INK)
            x += 22 + text_width(name)

    def svg(self, label: str) -> str:
        """The plot as an <svg> element that scales to its container."""
        body = "".join(self.parts)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:g} '
            f'{self.height:g}" class="plot" role="img" aria-label="{escape(label)}">'
            f"{body}</svg>"
        )
