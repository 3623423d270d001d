"""The Dagster component: the example project (examples/dagster-project) adds a suite with a
defs.yaml; it loads in a real `dagster dev`, one partition materializes from a backfill, and the
suite's nightly automation runs it too, each run tagged with its suite and agents."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.suite_component import EvalSuiteTranslator, build_suite_defs
from evals_pipeline_tests.dagster_dev import BIN, backfill, dagster_dev, graphql, run_tags
from evals_pipeline_tests.defs.conftest import REPO

EXAMPLE = REPO / "examples" / "dagster-project"
SUITE = "eval_project/defs/greetings/greetings.eval.yaml"
LAYERS = ("cases", "agent_runs", "sessions", "grades")
TIMEOUT_SECONDS = 300


ASSETS = """
{
  assetNodes(group: {groupName: "evals", repositoryName: "__repository__",
                     repositoryLocationName: "eval_project"}) {
    assetKey { path }
    tags { key value }
  }
  sensorsOrError(repositorySelector: {repositoryName: "__repository__",
                                      repositoryLocationName: "eval_project"}) {
    ... on Sensors { results { name sensorState { status } } }
  }
}"""

PARTITION = """
query Partition($path: [String!]!, $partition: String!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode {
      partitionStats { numMaterialized }
      latestMaterializationByPartition(partitions: [$partition]) {
        metadataEntries { label ... on TextMetadataEntry { text } }
      }
    }
  }
}"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """`dagster dev` serving a copy of the example project, its nightly every minute: (port,
    storage root)."""
    tmp = tmp_path_factory.mktemp("component")
    folder = tmp / "project"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    component = folder / "eval_project" / "defs" / "greetings" / "defs.yaml"
    component.write_text(component.read_text().replace('"0 3 * * *"', '"* * * * *"'))
    home, storage = tmp / "dagster", tmp / "storage"
    env = {**os.environ, "DAGSTER_HOME": str(home), "EVALS_PIPELINE_STORAGE": str(storage)}
    # The suite's cases as partitions now (its greetings_cases sensor would on its first tick).
    subprocess.run(
        [str(BIN / "evals-pipeline"), "register", str(folder / SUITE)],
        env=env,
        check=True,
        timeout=120,
    )
    with dagster_dev(["-w", "workspace.yaml"], folder, env, tmp / "dagster-dev.log") as port:
        yield port, storage


def test_the_example_project_loads_the_suite_as_a_component(project: tuple[int, Path]) -> None:
    port = project[0]
    data = graphql(port, ASSETS)
    assets = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    layers = (*LAYERS, "judgments", "eval_report", "failures")
    assert set(assets) == {f"greetings/{n}" for n in layers}
    for node in assets.values():
        assert {"key": "team", "value": "agents"} in node["tags"]
    sensors = {s["name"]: s["sensorState"]["status"] for s in data["sensorsOrError"]["results"]}
    assert sensors == {"greetings_cases": "RUNNING", "greetings_automation": "RUNNING"}


def test_one_partition_materializes_in_a_tagged_run(project: tuple[int, Path]) -> None:
    port, storage = project
    launched = backfill(
        port, ["polite|says-hello"], [["greetings", layer] for layer in LAYERS], TIMEOUT_SECONDS
    )

    grades = graphql(
        port, PARTITION, {"path": ["greetings", "grades"], "partition": "polite|says-hello"}
    )
    node = grades["assetNodeOrError"]
    assert node["partitionStats"]["numMaterialized"] == 1
    [materialization] = node["latestMaterializationByPartition"]
    shown = {e["label"]: e.get("text") for e in materialization["metadataEntries"]}
    assert shown["verdict"] == "pass"
    assert list((storage / "greetings" / "agent_runs").glob("*/polite/says-hello"))

    runs = run_tags(port, {"tags": [{"key": "dagster/backfill", "value": launched}]})
    assert runs and all(
        (t["evals/suite"], t["evals/agent"]) == ("greetings", "polite") for t in runs
    ), runs


def test_the_nightly_automation_runs_the_suite_in_tagged_runs(project: tuple[int, Path]) -> None:
    port = project[0]
    deadline = time.monotonic() + TIMEOUT_SECONDS
    automated: list[dict[str, str]] = []
    while time.monotonic() < deadline and not automated:
        runs = run_tags(
            port, {"tags": [{"key": "dagster/from_automation_condition", "value": "true"}]}
        )
        automated = [t for t in runs if "evals/suite" in t or "dagster/backfill" in t]
        time.sleep(5)
    assert automated, "the nightly automation launched no run"
    for tags in automated:
        assert tags["evals/suite"] == "greetings", tags
        assert set(tags["evals/agents"].split(",")) <= {"polite", "terse"}, tags


def test_the_python_factory_and_the_component_build_the_same_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    translator = EvalSuiteTranslator(group_name="evals", nightly=False)
    defs = build_suite_defs(EXAMPLE / SUITE, storage=str(tmp_path), translator=translator)
    graph = defs.resolve_asset_graph()
    cases = graph.get(dg.AssetKey(["greetings", "cases"]))
    assert cases.group_name == "evals" and cases.automation_condition is None
    assert {s.name for s in defs.sensors or []} == {"greetings_cases", "greetings_automation"}

    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.setenv("EVALS_PIPELINE_STORAGE", str(tmp_path))
    project = dg.load_from_defs_folder(path_within_project=EXAMPLE)
    assert project.resolve_asset_graph().get_all_asset_keys() == graph.get_all_asset_keys()
    component = project.resolve_asset_graph().get(dg.AssetKey(["greetings", "cases"]))
    assert component.automation_condition is not None  # the yaml keeps the nightly on


def test_the_translator_owns_group_automation_and_tags_in_the_shipped_location_too() -> None:
    """The assets set no group, automation or tags of their own: the shipped code location
    (build_definitions) gets them from the default translator, as a component does from its own,
    so a translator decides them for every asset of a suite, the report included."""
    from evals_pipeline.defs.assets import build_suite_assets
    from evals_pipeline.defs.definitions import (
        build_definitions,
        storage_resources,
        suite_definitions,
    )
    from evals_pipeline.suites import load_suite

    loaded = load_suite(EXAMPLE / SUITE)
    bare = [spec for a in build_suite_assets(loaded) for spec in a.specs]
    assert bare and all(s.automation_condition is None for s in bare)
    assert {s.group_name for s in bare} == {"default"}

    shipped = build_definitions([loaded], "/tmp/unused-root").resolve_asset_graph()
    keys = shipped.get_all_asset_keys()
    assert {shipped.get(k).group_name for k in keys} == {"greetings"}
    # Every step's asset runs nightly; the failures list is no step's (defs/case_failures.py).
    automated = {k.path[-1] for k in keys if shipped.get(k).automation_condition is not None}
    assert automated == {k.path[-1] for k in keys} - {"failures"}
    report = shipped.get(dg.AssetKey(["greetings", "eval_report"])).automation_condition
    assert report is not None and "grades updated" in str(report.get_label() or report)

    translator = EvalSuiteTranslator(group_name="team", nightly=False, tags={"team": "agents"})
    resources = dg.Definitions(resources=storage_resources("/tmp/unused-root"))
    own = dg.Definitions.merge(suite_definitions(loaded, translator), resources)
    own = own.resolve_asset_graph()
    layers = [k for k in own.get_all_asset_keys() if k.path[-1] != "eval_report"]
    assert {own.get(k).group_name for k in own.get_all_asset_keys()} == {"team"}
    assert all(own.get(k).automation_condition is None for k in layers)
    assert all(own.get(k).tags.get("team") == "agents" for k in own.get_all_asset_keys())
