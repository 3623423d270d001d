"""The `failures` asset lists exactly the case x agent pairs whose latest verdict is fail or
error, each with its reason; a case that passes again, or leaves the suite, leaves the list; and
its `every_case_passes` check is red while the list is not empty, whichever case ran last."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from evals_pipeline.defs.case_failures import EVERY_CASE_PASSES, FAILURES
from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import failures_partitions_name
from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.suites import load_suite

SUITE = """\
name: listed
execution: {{targets: [echo], workers: 2}}
targets:
  - {{name: echo, provider: mock, response: 'hello world'}}
tests:
  - {{id: greets, input: say hello, assertions: [{{type: contains, value: {greets}}}]}}
  - {{id: waves, input: wave, assertions: [{{type: contains, value: wave}}]}}
{extra}"""
CRASHES = "  - {id: crashes, input: x, assertions: [{type: is-json}]}\n"
FAILURES_KEY = dg.AssetKey(["listed", FAILURES])


def _run(instance: dg.DagsterInstance, tmp_path: Path, greets: str, extra: str = "") -> None:
    path = tmp_path / "listed.eval.yaml"
    path.write_text(SUITE.format(greets=greets, extra=extra))
    suite = load_suite(path)
    cases = [c.id for c in suite.suite.tests]
    storage = str(tmp_path / "storage")
    run_suite(instance, suite, storage, agents=["echo"], case_keys=cases, echo=lambda _: None)


def _listed(instance: dg.DagsterInstance) -> list[str]:
    return sorted(instance.get_dynamic_partitions(failures_partitions_name("listed")))


def _check(instance: dg.DagsterInstance) -> tuple[bool, str | None, int]:
    key = dg.AssetCheckKey(FAILURES_KEY, EVERY_CASE_PASSES)
    [record] = instance.event_log_storage.get_asset_check_execution_history(key, limit=1)
    assert record.event is not None and record.event.dagster_event is not None
    evaluation = record.event.dagster_event.asset_check_evaluation_data
    assert evaluation.severity == dg.AssetCheckSeverity.ERROR
    return evaluation.passed, evaluation.description, evaluation.metadata["failing"].value


def test_the_failures_list_follows_the_latest_verdicts(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    _run(instance, tmp_path, greets="goodbye", extra=CRASHES)
    assert _listed(instance) == ["echo|crashes", "echo|greets", "echo|waves"]
    records = instance.fetch_materializations(FAILURES_KEY, limit=10).records
    reasons = {}
    for r in records:
        assert r.asset_materialization is not None
        reasons[r.partition_key] = r.asset_materialization.description
    assert reasons["echo|greets"] == "score 0.00 < 0.8: contains-goodbye"
    assert _check(instance) == (False, "3 case(s) did not pass", 3)

    # greets passes now, crashes left the suite: both leave the list; waves stays.
    _run(instance, tmp_path, greets="hello")
    assert _listed(instance) == ["echo|waves"]
    assert _check(instance) == (False, "1 case(s) did not pass", 1)


def test_every_case_passing_empties_the_list_and_greens_the_check(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    _run(instance, tmp_path, greets="goodbye")
    assert _listed(instance) == ["echo|greets", "echo|waves"]
    path = tmp_path / "listed.eval.yaml"
    path.write_text(SUITE.format(greets="hello", extra="").replace("value: wave", "value: hello"))
    storage, cases = str(tmp_path / "storage"), ["greets", "waves"]
    run_suite(instance, load_suite(path), storage, agents=["echo"], case_keys=cases, echo=print)
    assert _listed(instance) == []
    assert _check(instance) == (True, "every case passed", 0)


def test_the_code_location_declares_the_list_and_its_check_runs_on_the_list_as_it_stands(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    _run(instance, tmp_path, greets="goodbye")
    defs = build_definitions([load_suite(tmp_path / "listed.eval.yaml")], str(tmp_path / "s"))
    node = defs.resolve_asset_graph().get(FAILURES_KEY)
    assert not node.is_executable  # no step makes it: the grades step records it
    assert node.parent_keys == {dg.AssetKey(["listed", "grades"])}
    assert node.group_name == "listed" and node.automation_condition is None
    key = dg.AssetCheckKey(FAILURES_KEY, EVERY_CASE_PASSES)
    check = defs.resolve_asset_graph().assets_def_for_key(key)
    # Run from the UI, the check reads the list itself.
    result = dg.materialize([check], instance=instance, selection=dg.AssetSelection.checks(key))
    [evaluation] = result.get_asset_check_evaluations()
    assert (evaluation.passed, evaluation.metadata["failing"].value) == (False, 2)
    assert "echo|greets" in evaluation.metadata["cases"].value
