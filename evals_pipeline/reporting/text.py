"""Display strings shared by the Markdown sections: percentages, numbers, p-values, tables."""

from __future__ import annotations


def pct(value: float | None, digits: int = 1) -> str:
    """A rate as a percentage, `-` when undefined."""
    return "-" if value is None else f"{value:.{digits}%}"


def num(value: float | None, digits: int = 3) -> str:
    """A number with fixed decimals, `-` when undefined."""
    return "-" if value is None else f"{value:.{digits}f}"


def count(value: int | None) -> str:
    """A whole number, `-` when unknown (never a 0 that was not counted)."""
    return "-" if value is None else str(value)


def p_value(value: float | None) -> str:
    """A p-value with four decimals, `<0.0001` below that."""
    if value is None:
        return "-"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """A 95% interval of rates, as `[76.9%, 97.3%]`."""
    if low is None or high is None:
        return "-"
    return f"[{low:.{digits}%}, {high:.{digits}%}]"


def signed_interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """An interval of differences, as `[+0.019, +0.301]`."""
    if low is None or high is None:
        return "-"
    return f"[{low:+.{digits}f}, {high:+.{digits}f}]"


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table's lines."""
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
