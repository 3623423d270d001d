"""Dagster instances and suites for the graph tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart" / "quickstart.eval.yaml"


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as instance:
        yield instance


def write_suite(folder: Path, tests: list[tuple[str, str]], name: str = "demo") -> Path:
    """A suite with two mock targets; each test is (id, expected substring)."""
    lines = [
        f"name: {name}",
        "execution: {targets: [echo, silent], workers: 2}",
        "targets:",
        "  - {name: echo, provider: mock, response: 'hello world'}",
        "  - {name: silent, provider: mock, response: ''}",
        "tests:",
    ]
    for test_id, expected in tests:
        lines += [
            f"  - id: {test_id}",
            f"    input: say {expected}",
            f"    assertions: [{{type: contains, value: {expected}}}]",
        ]
    path = folder / f"{name}.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path
