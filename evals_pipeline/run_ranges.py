"""Partition ranges: a selection of names split into runs of neighbours, each one partition range
and so one Dagster run. No Dagster here: the CLI plans its first run before Dagster loads."""

from __future__ import annotations

from collections.abc import Collection


def contiguous_ranges(selected: Collection[str], order: list[str]) -> list[list[str]]:
    """The `selected` names split into runs of neighbours in `order`: each run is one partition
    range, so one Dagster run."""
    ranges: list[list[str]] = []
    last = -2
    for index, name in enumerate(order):
        if name not in selected:
            continue
        if index != last + 1:
            ranges.append([])
        ranges[-1].append(name)
        last = index
    return ranges
