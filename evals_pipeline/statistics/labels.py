"""The label vocabularies the statistics share with the judging layer (judging.md §1)."""

from __future__ import annotations

from typing import Literal

Verdict = Literal["PASS", "FAIL"]
"""A binary judge or human decision; PASS is the positive class (§0)."""

SlotReading = Literal["FIRST", "SECOND", "TIE", "INVALID"]
"""What one order of a pairwise call preferred, by slot; INVALID when the call failed grounding."""

PairwiseVote = Literal["A", "B", "TIE"]
"""A pairwise preference mapped back to the agents."""


def is_pass(label: Verdict | bool) -> bool:
    """True for PASS (or True): the blended decision is a bool, judge and human labels are strings."""
    if isinstance(label, bool):
        return label
    if label not in ("PASS", "FAIL"):
        raise ValueError(f"a verdict is PASS or FAIL, got {label!r}")
    return label == "PASS"
