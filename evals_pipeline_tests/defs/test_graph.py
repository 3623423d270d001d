"""End to end: suites run through the real Dagster machinery, in-process, on a temp instance."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.definitions import build_definitions, load_suites
from evals_pipeline.defs.partitions import case_partitions_name, partition_key
from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.defs.conftest import QUICKSTART, REPO, write_suite


def case_keys(path: Path) -> list[str]:
    return list(dict.fromkeys(c.case_key for c in resolve_cases(load_suite(path))))


def test_example_suite_report_numbers_per_agent(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    suite = load_suite(QUICKSTART)
    outcome = run_suite(
        instance,
        suite,
        str(tmp_path / "storage"),
        agents=["careful", "hasty"],
        case_keys=case_keys(QUICKSTART),
        echo=lambda _: None,
    )
    by_agent = {a.agent: a for a in outcome.report.agents}
    careful, hasty = by_agent["careful"], by_agent["hasty"]
    assert (careful.cases, careful.passed, careful.failed, careful.errors) == (10, 9, 0, 1)
    assert (hasty.cases, hasty.passed, hasty.failed, hasty.errors) == (10, 3, 5, 2)
    assert careful.mean_score == pytest.approx(1.0)
    # hasty's eight graded cases: 0, 1, 1, 2/3, 2/3, 1/2, 1/2, 1
    assert hasty.mean_score == pytest.approx((0 + 1 + 1 + 2 / 3 + 2 / 3 + 0.5 + 0.5 + 1) / 8)
    # An error is not a pass: passed / cases (graded only: 9/9 and 3/8, labelled apart).
    assert careful.pass_rate == pytest.approx(0.9) and hasty.pass_rate == pytest.approx(0.3)
    assert careful.pass_rate_graded == 1.0 and hasty.pass_rate_graded == pytest.approx(3 / 8)
    errors = {
        (f.agent, f.test_id): f.reason for f in outcome.report.failures if f.verdict == "error"
    }
    assert "KeyError" in errors[("careful", "word-limit")]
    assert "simulated crash" in errors[("hasty", "migrate-database")]

    # The same figures are Dagster metadata on the eval_report materialization.
    event = instance.get_latest_materialization_event(dg.AssetKey(["quickstart", "eval_report"]))
    assert event is not None and event.asset_materialization is not None
    metadata = event.asset_materialization.metadata
    assert metadata["hasty/passed"].value == 3 and metadata["hasty/errors"].value == 2
    assert metadata["careful/pass_rate"].value == pytest.approx(0.9)
    assert "| careful |" in str(metadata["summary"].value)
    assert Path(str(metadata["dagster/uri"].value)) == outcome.report_folder
    assert {p.name for p in outcome.report_folder.iterdir()} >= {
        "summary.md",
        "cases.parquet",
        "graders.parquet",
        "results.jsonl",
        "report.json",
    }


def test_one_partition_reruns_alone_and_keeps_earlier_runs(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    suite = load_suite(path)
    storage = str(tmp_path / "storage")
    first = run_suite(
        instance,
        suite,
        storage,
        agents=["echo", "silent"],
        case_keys=case_keys(path),
        echo=lambda _: None,
    )
    assert [(a.agent, a.passed, a.failed) for a in first.report.agents] == [
        ("echo", 1, 1),
        ("silent", 0, 2),
    ]

    defs = build_definitions([suite], storage)
    layers = [dg.AssetKey(["demo", name]) for name in ("cases", "agent_runs", "sessions", "grades")]
    result = dg.materialize(
        [defs.resolve_assets_def(k) for k in layers],
        partition_key=partition_key("greets", "echo"),
        instance=instance,
    )
    assert result.success
    grades_runs = sorted(p.name for p in (tmp_path / "storage" / "demo" / "grades").iterdir())
    assert len(grades_runs) == 2, "a re-run writes a new run folder; the first is kept"
    assert result.run_id in grades_runs


def test_each_suite_has_only_its_own_agents(tmp_path: Path) -> None:
    write_suite(tmp_path, [("a", "x")], name="first")
    other = tmp_path / "other.eval.yaml"
    other.write_text(
        "name: second\ntargets:\n  - {name: solo, provider: mock}\ntests:\n"
        "  - {id: b, input: hi, assertions: [{type: contains, value: hi}]}\n"
    )
    defs = build_definitions(load_suites([tmp_path]), str(tmp_path / "storage"))
    graph = defs.resolve_asset_graph()
    for suite, agents in (("first", ["echo", "silent"]), ("second", ["solo"])):
        partitions = graph.get(dg.AssetKey([suite, "agent_runs"])).partitions_def
        assert isinstance(partitions, dg.MultiPartitionsDefinition)
        agent_dim = next(d for d in partitions.partitions_defs if d.name == "agent")
        assert agent_dim.partitions_def.get_partition_keys() == agents


def test_the_code_location_loads_the_examples(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("EVALS_PIPELINE_STORAGE", str(tmp_path))
    from evals_pipeline.defs.definitions import definitions_from_env

    defs = definitions_from_env()
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {
        f"quickstart/{n}" for n in ("cases", "agent_runs", "sessions", "grades", "eval_report")
    } <= keys
    sensors = {s.name for s in defs.sensors or []}
    assert {"quickstart_cases", "nightly_evals"} <= sensors
    assert case_partitions_name("quickstart") == "quickstart__cases"
