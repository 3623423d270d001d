"""Verdict normalisation shared by calibration and the panel."""

from __future__ import annotations

import pytest

from evals_pipeline.statistics.labels import is_pass


@pytest.mark.parametrize(
    ("label", "expected"), [("PASS", True), ("FAIL", False), (True, True), (False, False)]
)
def test_is_pass(label: str | bool, expected: bool) -> None:
    assert is_pass(label) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize("label", ["pass", "Pass", "", "TIE", 1])
def test_is_pass_rejects_other_labels(label: object) -> None:
    with pytest.raises(ValueError):
        is_pass(label)  # type: ignore[arg-type]
