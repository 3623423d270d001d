"""`run --agentv-scoring` against the real agentv: a code grader that could not judge (a crash, a
missing module, half a JSON object, a score that is no number) scores as agentv 4.42.4 scores it,
test by test, while the grader keeps its error. Without the option the same tests are errors
(conformance/crashing-grader/differences.yaml, checked by test_agentv_parity.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals_pipeline_tests.conformance.parity import (
    AGENTV,
    CONFORMANCE,
    base_env,
    differences,
    fresh_copy,
    run_agentv,
    run_ours,
)

FOLDER = CONFORMANCE / "crashing-grader"


def test_agentv_scoring_scores_failed_graders_as_agentv(tmp_path: Path) -> None:
    if not AGENTV.exists():
        pytest.fail(f"{AGENTV} is missing: run `make agentv` (needs node and npm)")
    env = base_env(tmp_path / "home", {})
    (tmp_path / "home").mkdir()
    agentv = run_agentv(fresh_copy(FOLDER, tmp_path / "a"), tmp_path / "a-out", env)
    ours = run_ours(
        fresh_copy(FOLDER, tmp_path / "b"),
        tmp_path / "b-out",
        tmp_path / "b-state",
        env,
        ("--agentv-scoring",),
    )
    explain = f"\n--- agentv ---\n{agentv.console[-3000:]}\n--- ours ---\n{ours.console[-3000:]}"
    assert len(agentv.rows) == 7, explain
    assert [d.describe() for d in differences(agentv.rows, ours.rows)] == [], explain
    # Still flagged: each grader that could not judge keeps its error, and the case says so.
    crashed = ours.rows[("missing-module", "agent")]
    ts = next(g for g in crashed["scores"] if g["name"] == "ts")
    assert "Cannot find module './grade-helper'" in json.dumps(ts), ts
    assert "could not grade" in ours.console, explain
