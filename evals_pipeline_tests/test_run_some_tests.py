"""`evals-pipeline run --test-id` runs some of a suite's tests: the others stay registered, with
their results and failures, so the UI on the same instance still shows the whole suite."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from evals_pipeline.defs.partitions import case_partitions_name, failures_partitions_name
from evals_pipeline_tests.defs.conftest import write_suite
from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows

RANGE_START = "dagster/asset_partition_range_start"


def test_a_run_of_some_tests_leaves_the_others_registered_and_reports_its_own(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave"), ("hops", "hop")])
    everything = cli("run", str(suite), home=tmp_path)
    assert everything.code in (0, 1), everything.explain()
    instance = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    first_runs = {r.run_id for r in instance.get_runs()}
    failing = sorted(instance.get_dynamic_partitions(failures_partitions_name("demo")))
    assert {"echo|waves", "silent|waves"} <= set(failing), failing  # `silent` says nothing

    # Two tests that are not neighbours.
    some = cli("run", str(suite), "--test-id", "greets", "--test-id", "hops", home=tmp_path)
    assert some.code in (0, 1), some.explain()
    assert instance.get_dynamic_partitions(case_partitions_name("demo")) == [
        "greets",
        "waves",
        "hops",
    ]
    # `waves` did not run: its failure is still on the list.
    assert sorted(instance.get_dynamic_partitions(failures_partitions_name("demo"))) == failing
    # One run of the layers per range of neighbouring picked cases: a Dagster run holds one.
    ranges = sorted(
        (r.tags[RANGE_START], r.tags["dagster/asset_partition_range_end"])
        for r in instance.get_runs()
        if r.run_id not in first_runs and RANGE_START in r.tags and "evals/agents" in r.tags
    )
    assert ranges == [("echo|greets", "silent|greets"), ("echo|hops", "silent|hops")]

    # The report is of the two tests it ran, not of the stored third.
    rows = table_rows(some.stdout)
    assert {agent: row["cases"] for agent, row in rows.items()} == {"echo": "2", "silent": "2"}
    report = json.loads((printed_report_folder(some.stdout) / "report.json").read_text())
    assert report["not_run"] == 0, report["not_run"]
