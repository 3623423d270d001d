"""The assets' code version is the suite's fingerprint: editing the suite or a grader script
changes it, and Dagster then marks the materialized partitions stale (a code change)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dagster._core.definitions.data_version import (
    CachingStaleStatusResolver,
    StaleCauseCategory,
    StaleStatus,
)
from dagster._core.loader import LoadingContextForTest

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import case_partitions_name
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.defs.conftest import write_suite

LAYERS = ("cases", "agent_runs", "sessions", "grades", "judgments", "eval_report")


def code_versions(path: Path) -> dict[str, str | None]:
    defs = build_definitions([load_suite(path)], "unused")
    graph = defs.resolve_asset_graph()
    return {name: graph.get(dg.AssetKey(["demo", name])).code_version for name in LAYERS}


def with_grader(folder: Path) -> Path:
    path = write_suite(folder, [("greets", "hello")])
    (folder / "check.py").write_text("print('{\"score\": 1}')\n")
    grader = "    assertions: [{type: code-grader, command: [python3, check.py]}]\n"
    path.write_text(
        path.read_text().replace("    assertions: [{type: contains, value: hello}]\n", grader)
    )
    return path


def test_the_code_version_follows_the_suite_file_and_its_grader_script(tmp_path: Path) -> None:
    path = with_grader(tmp_path)
    first = code_versions(path)
    assert len(set(first.values())) == 1 and None not in first.values(), first
    assert code_versions(path) == first, "an unchanged suite keeps its version"

    (tmp_path / "check.py").write_text("print('{\"score\": 0}')\n")
    graded = code_versions(path)
    assert set(graded.values()).isdisjoint(first.values()), "a changed grader script counts"

    path.write_text(path.read_text().replace("input: say hello", "input: say hello, please"))
    assert set(code_versions(path).values()).isdisjoint({*first.values(), *graded.values()})


def test_the_code_version_follows_a_script_in_the_graders_own_folder(tmp_path: Path) -> None:
    path = with_grader(tmp_path)
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "check.py").write_text("print('{\"score\": 1}')\n")
    path.write_text(path.read_text().replace("check.py]}", "check.py], cwd: graders}"))
    first = code_versions(path)["grades"]
    (tmp_path / "graders" / "check.py").write_text("print('{\"score\": 0}')\n")
    assert code_versions(path)["grades"] != first


def test_dagster_marks_a_materialized_partition_stale_when_the_suite_changes(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    before = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    instance.add_dynamic_partitions(case_partitions_name("demo"), ["greets", "waves"])
    key = dg.AssetKey(["demo", "cases"])
    result = dg.materialize(
        [before.resolve_assets_def(key)], partition_key="echo|greets", instance=instance
    )
    assert result.success

    def status(defs: dg.Definitions) -> tuple[StaleStatus, list[StaleCauseCategory]]:
        resolver = CachingStaleStatusResolver(
            instance, defs.resolve_asset_graph(), LoadingContextForTest(instance)
        )
        causes = resolver.get_stale_causes(key, "echo|greets")
        return resolver.get_status(key, "echo|greets"), [c.category for c in causes]

    assert status(before) == (StaleStatus.FRESH, [])
    path.write_text(path.read_text().replace("input: say wave", "input: say wave twice"))
    after = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    assert status(after) == (StaleStatus.STALE, [StaleCauseCategory.CODE])
