"""A run's options laid over a suite file: `--threshold` for tests without their own, and
`--keep-workspaces` on every resolved case, which keeps its key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.results.keys import case_keys
from evals_pipeline.suites import (
    RunOptions,
    apply_run_options,
    load_suite,
    resolve_cases,
    with_run_options,
)
from evals_pipeline_tests.suites.conftest import Project

SUITE = """\
workspace:
  template: ws
tests:
  - id: plain
    input: hi
    criteria: c
  - id: own
    input: hi
    criteria: c
    execution: {threshold: 0.9}
  - id: own-workspace
    input: hi
    criteria: c
    workspace: {template: ws, cleanup: always}
"""


def _cases(project: Project, options: RunOptions, suite: str = SUITE) -> dict[str, ResolvedCase]:
    project.write("ws/readme.md", "x")
    loaded = apply_run_options(load_suite(project.write("s.eval.yaml", suite)), options)
    return {c.test_id: c for c in with_run_options(resolve_cases(loaded), options)}


def test_defaults_change_nothing(project: Project) -> None:
    cases = _cases(project, RunOptions())
    assert [c.threshold for c in cases.values()] == [0.8, 0.9, 0.8]
    assert [c.workspace.cleanup if c.workspace else None for c in cases.values()] == [
        "on_success",
        "on_success",
        "always",
    ]


def test_threshold_applies_to_tests_without_their_own(project: Project) -> None:
    cases = _cases(project, RunOptions(threshold=0.5))
    assert [c.threshold for c in cases.values()] == [0.5, 0.9, 0.5]


@pytest.mark.parametrize("suite", [SUITE, "tests: [{id: bare, input: hi, criteria: c}]"])
def test_keep_workspaces_keeps_every_workspace_and_every_key(project: Project, suite: str) -> None:
    # A suite without `workspace:` too: its runs get an empty one, kept as well.
    kept = _cases(project, RunOptions(keep_workspaces=True), suite)
    plain = _cases(project, RunOptions(), suite)
    assert all(c.keep_workspaces for c in kept.values())
    assert not any(c.keep_workspaces for c in plain.values())
    for test_id, case in kept.items():
        assert case.content_hash == plain[test_id].content_hash
        assert case_keys(case, lambda _: None) == case_keys(plain[test_id], lambda _: None)


def test_agentv_scoring_reaches_every_case_and_only_its_grade_key(project: Project) -> None:
    scored = _cases(project, RunOptions(agentv_scoring=True))
    plain = _cases(project, RunOptions())
    assert all(c.agentv_scoring for c in scored.values())
    assert not any(c.agentv_scoring for c in plain.values())
    for test_id, case in scored.items():
        keys, plain_keys = (
            case_keys(case, lambda _: None),
            case_keys(plain[test_id], lambda _: None),
        )
        assert (keys.runs, keys.grade != plain_keys.grade) == (plain_keys.runs, True)


def test_a_threshold_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValidationError):
        RunOptions(threshold=1.5)
