"""The differential test: every conformance folder scores the same under agentv 4.42.4 and ours.

`make agentv` (part of `make test`) installs the pinned agentv; without it these tests fail, since
compatibility is only proven by running the real tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline_tests.conformance.parity import (
    AGENTV,
    ToolRun,
    base_env,
    conformance_folders,
    differences,
    expected_differences,
    fresh_copy,
    model_server_env,
    run_agentv,
    run_ours,
)

FOLDERS = conformance_folders()


def _explain(agentv: ToolRun, ours: ToolRun) -> str:
    return f"\n--- agentv ---\n{agentv.console[-4000:]}\n--- evals-pipeline ---\n{ours.console[-4000:]}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_scores_match_agentv(folder: Path, tmp_path: Path) -> None:
    if not AGENTV.exists():
        pytest.fail(f"{AGENTV} is missing: run `make agentv` (needs node and npm)")
    with model_server_env(folder) as extra:
        env = base_env(tmp_path / "home", extra)
        (tmp_path / "home").mkdir()
        agentv = run_agentv(fresh_copy(folder, tmp_path / "a"), tmp_path / "a-out", env)
        ours = run_ours(
            fresh_copy(folder, tmp_path / "b"), tmp_path / "b-out", tmp_path / "b-state", env
        )
    assert agentv.rows, f"agentv wrote no results{_explain(agentv, ours)}"
    assert ours.rows, f"evals-pipeline wrote no results{_explain(agentv, ours)}"
    found = differences(agentv.rows, ours.rows)
    expected = expected_differences(folder)
    unexplained = [d.describe() for d in found if d not in expected]
    vanished = [d.describe() for d in expected if d not in found]
    assert not unexplained, "\n".join(unexplained) + _explain(agentv, ours)
    assert not vanished, "known differences no longer seen:\n" + "\n".join(vanished)


def test_every_feature_folder_is_collected() -> None:
    assert FOLDERS, "no conformance folders found under conformance/"
