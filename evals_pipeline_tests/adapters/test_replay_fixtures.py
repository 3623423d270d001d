"""AgentV's replay fixtures (`agentv eval --record-replay`) graded without running an agent."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from evals_pipeline.adapters.replay import FixtureError, read_fixtures
from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.errors import message_of
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases


def record(test_id: str, answer: str, **extra: Any) -> dict[str, Any]:
    return {
        "schema_version": "agentv.replay_fixture.v1",
        "suite": "rp",
        "test_id": test_id,
        "source_target": "live",
        "attempt": 0,
        "variant": None,
        "output": [{"role": "assistant", "content": answer, "tool_calls": [{"tool": "Read"}]}],
        "token_usage": {"input": 10, "output": 2},
        "cost_usd": 0.5,
        **extra,
    }


def project(root: Path, records: list[dict[str, Any]], target_extra: str = "") -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "fixtures.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        "targets: [{name: replayed, provider: replay, fixtures: fixtures.jsonl, "
        f"source_target: live{target_extra}}}]\n"
    )
    suite = root / "s.eval.yaml"
    suite.write_text(
        dedent(
            """\
            name: rp
            tests:
              - {id: a, input: x, assertions: [{type: contains, value: alpha}, {type: cost, budget: 1}]}
              - {id: b, input: x, assertions: [{type: contains, value: beta}]}
            """
        )
    )
    return suite


def grades(suite: Path, folder: Path) -> dict[str, Any]:
    cases = resolve_cases(load_suite(suite))
    sessions = enrich_runs(run_agents(cases, folder / "r", workers=1), folder / "s")
    return {g.test_id: g for g in grade_cases(cases, sessions, workers=1)}


def test_recorded_outputs_are_graded_and_a_missing_record_is_an_error(tmp_path: Path) -> None:
    suite = project(tmp_path / "p", [record("a", "alpha"), record("c", "gamma")])
    found = grades(suite, tmp_path / "out")
    assert (found["a"].score, found["a"].execution_status) == (1.0, "ok")
    assert found["a"].trials[0].cost_usd == 0.5
    assert found["b"].execution_status == "execution_error"
    assert "replay fixture lookup found no record for suite=rp" in (
        message_of(found["b"].error) or ""
    )


def test_the_variant_and_eval_path_pick_the_record(tmp_path: Path) -> None:
    records = [
        record("a", "wrong: no variant"),
        record("a", "alpha, variant two", variant="two", eval_path="p/s.eval.yaml"),
        record("a", "wrong: other eval", variant="two", eval_path="elsewhere/s.eval.yaml"),
        record("b", "beta", variant="two"),
    ]
    suite = project(tmp_path / "p", records, ", variant: two")
    found = grades(suite, tmp_path / "out")
    assert (found["a"].score, found["b"].score) == (1.0, 1.0)


def test_duplicate_records_are_an_error(tmp_path: Path) -> None:
    suite = project(tmp_path / "p", [record("a", "alpha"), record("a", "alpha")])
    found = grades(suite, tmp_path / "out")
    assert "found 2 duplicate records" in (message_of(found["a"].error) or "")


def test_a_bad_fixtures_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(record("a", "x")) + "\n{not json\n")
    with pytest.raises(FixtureError, match=r"f\.jsonl:2"):
        read_fixtures(path)
    path.write_text(json.dumps({**record("a", "x"), "schema_version": "v0"}) + "\n")
    with pytest.raises(FixtureError, match="schema_version"):
        read_fixtures(path)


def test_a_replay_target_needs_one_source(tmp_path: Path) -> None:
    suite = project(tmp_path / "p", [record("a", "alpha")])
    (tmp_path / "p/.agentv/targets.yaml").write_text(
        "targets: [{name: replayed, provider: replay, fixtures: fixtures.jsonl}]\n"
    )
    with pytest.raises(SuiteError, match="needs source_target"):
        resolve_cases(load_suite(suite))  # an invalid target fails the run that selects it
    (tmp_path / "p/.agentv/targets.yaml").write_text(
        "targets: [{name: replayed, provider: replay, source_target: live, fixtures: nope.jsonl}]\n"
    )
    with pytest.raises(SuiteError, match=r"replay fixtures file 'nope\.jsonl' not found"):
        load_suite(suite)
