"""The cases sensor: new, changed and removed tests, one partitions call per tick, a cursor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs import sensors
from evals_pipeline.defs.assets import LAYERS
from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import case_partitions_name
from evals_pipeline.instance.registration import EvalInstance
from evals_pipeline.suites import LoadedSuite, load_suite, parse_cache
from evals_pipeline_tests.defs.conftest import write_suite

EVAL_INSTANCE = {"module": "evals_pipeline.instance.registration", "class": "EvalInstance"}


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    """An instance where only registration adds case partitions, as dagster.yaml sets it up."""
    with dg.instance_for_test(overrides={"instance_class": EVAL_INSTANCE}) as instance:
        assert isinstance(instance, EvalInstance)
        yield instance


def tick(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None
) -> dg.SensorResult | dg.SkipReason:
    """Evaluate the sensor once: it registers the cases itself and asks the daemon for runs."""
    sensor = defs.resolve_sensor_def("demo_cases")
    context = dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs)
    result = sensor(context)
    if isinstance(result, dg.SensorResult):
        assert not result.dynamic_partitions_requests
    return result


def covered(
    defs: dg.Definitions, instance: dg.DagsterInstance, request: dg.RunRequest
) -> list[str]:
    """The partition keys a run request's run does: its partition, or every key of its range
    as the run worker reads it (the suite's registered cases, in partition order)."""
    if request.partition_key is not None:
        return [str(request.partition_key)]
    key_range = request.partition_key_range
    assert key_range is not None, request
    partitions = defs.resolve_assets_def(dg.AssetKey(["demo", "cases"])).partitions_def
    assert isinstance(partitions, dg.MultiPartitionsDefinition)
    return [str(k) for k in partitions.get_partition_keys_in_range(key_range, instance)]


def run_keys(result: dg.SensorResult) -> set[str]:
    return {str(r.partition_key) for r in result.run_requests or []}


def test_new_changed_and_removed_tests_without_a_restart(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    name = case_partitions_name("demo")

    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult)
    assert not first.run_requests, "the first tick only registers"
    assert instance.get_dynamic_partitions(name) == ["greets", "waves"]

    assert isinstance(tick(defs, instance, first.cursor), dg.SkipReason)

    # A new test in the same file, seen by the same (not reloaded) definitions.
    write_suite(tmp_path, [("greets", "hello"), ("waves", "wave"), ("New Test", "world")])
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    assert run_keys(second) == {"echo|new-test", "silent|new-test"}
    assert instance.get_dynamic_partitions(name) == ["greets", "waves", "new-test"]

    # A changed test runs again; a removed one leaves the partitions.
    write_suite(tmp_path, [("greets", "hello there"), ("New Test", "world")])
    third = tick(defs, instance, second.cursor)
    assert isinstance(third, dg.SensorResult)
    assert run_keys(third) == {"echo|greets", "silent|greets"}
    assert instance.get_dynamic_partitions(name) == ["greets", "new-test"]


def test_a_broken_suite_skips_with_the_error(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    path = write_suite(tmp_path, [("greets", "hello")])
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    path.write_text(path.read_text().replace("input:", "inptu:"))
    result = tick(defs, instance, None)
    assert isinstance(result, dg.SkipReason)
    assert "inptu" in (result.skip_message or "") and "input" in (result.skip_message or "")


def test_one_edit_to_many_tests_runs_one_range_per_agent(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    tests = [(name, name) for name in ("a1", "b2", "c3", "d4", "e5", "f6")]
    path = write_suite(tmp_path, tests)
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult) and not first.run_requests

    # Four tests edited: three neighbours and one apart make two runs per agent, not eight.
    edited = {"b2", "c3", "d4", "f6"}
    write_suite(tmp_path, [(t, f"{e} again" if t in edited else e) for t, e in tests])
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    requests = second.run_requests or []
    assert [covered(defs, instance, r) for r in requests] == [
        ["echo|b2", "echo|c3", "echo|d4"],
        ["echo|f6"],
        ["silent|b2", "silent|c3", "silent|d4"],
        ["silent|f6"],
    ]
    ranged = requests[0]
    assert ranged.partition_key is None
    assert ranged.tags["dagster/asset_partition_range_start"] == "echo|b2"
    assert ranged.tags["dagster/asset_partition_range_end"] == "echo|d4"
    assert ranged.tags["evals/agent"] == "echo" and ranged.tags["evals/suite"] == "demo"
    assert len({r.run_key for r in requests}) == 4

    # The ranged request is one run doing exactly its three partitions in every layer.
    layers = [defs.resolve_assets_def(dg.AssetKey(["demo", layer])) for layer in LAYERS]
    assert dg.materialize(layers, instance=instance, tags=dict(ranged.tags)).success
    grades = instance.get_materialized_partitions(dg.AssetKey(["demo", "grades"]))
    assert sorted(grades) == ["echo|b2", "echo|c3", "echo|d4"]

    # The next tick has nothing to run; a tick that lost its cursor asks again under the same
    # run keys, which the sensor daemon does not launch twice.
    assert isinstance(tick(defs, instance, second.cursor), dg.SkipReason)
    again = tick(defs, instance, first.cursor)
    assert isinstance(again, dg.SensorResult)
    assert [r.run_key for r in again.run_requests or []] == [r.run_key for r in requests]

    # An edit to one agent's target changes every test for that agent: one run of all six.
    path.write_text(path.read_text().replace("'hello world'", "'hello there'"))
    third = tick(defs, instance, second.cursor)
    assert isinstance(third, dg.SensorResult)
    assert [covered(defs, instance, r) for r in third.run_requests or []] == [
        [f"echo|{t}" for t, _ in tests]
    ]


def test_a_test_for_one_agent_does_not_split_another_agents_range(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = write_suite(tmp_path, [("a1", "a"), ("b2", "b"), ("c3", "c")])
    only_echo = "  - id: b2\n    execution: {targets: [echo]}\n"
    path.write_text(path.read_text().replace("  - id: b2\n", only_echo))
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult)

    # a1 and c3 change: `silent` does not run b2, so its two cases are one range over b2.
    path.write_text(path.read_text().replace("say a\n", "say aa\n").replace("say c\n", "say cc\n"))
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    ranges = [
        (r.partition_key, r.tags.get("dagster/asset_partition_range_start"))
        for r in second.run_requests or []
    ]
    assert ranges == [("echo|a1", None), ("echo|c3", None), (None, "silent|a1")]
    assert (second.run_requests or [])[-1].tags["dagster/asset_partition_range_end"] == "silent|c3"


def test_a_large_suite_whose_parse_is_kept_still_sees_each_edit(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over parse_cache.MIN_CHARS: its parse is kept under the instance folder and in memory.
    home = tmp_path / "dagster"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    tests = [(f"t{i}", f"greeting-{i:04d}") for i in range(3_000)]
    path = write_suite(tmp_path, tests)
    assert len(path.read_text()) > parse_cache.MIN_CHARS
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult) and not first.run_requests
    assert list((home / "parsed-suites").iterdir()), "the parse was kept"

    tests[1234] = ("t1234", "greeting-1234 again")
    write_suite(tmp_path, tests)
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    assert run_keys(second) == {"echo|t1234", "silent|t1234"}
    assert isinstance(tick(defs, instance, second.cursor), dg.SkipReason)


def test_an_edit_outside_the_suite_file_is_seen_by_the_next_tick(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    """The code location's resolution is reused by a tick only while the files it read and
    looked for are as they were: a changed input file, or a grader's cwd folder made later,
    changes those cases (the suite file itself unchanged)."""
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    text = path.read_text()
    text = text.replace(
        "  - id: greets\n", "  - id: greets\n    input_files: [notes.txt]\n"
    ).replace(
        "[{type: contains, value: wave}]",
        "[{type: code-grader, command: [python3, check.py], cwd: graders}]",
    )
    path.write_text(text)
    (tmp_path / "notes.txt").write_text("first notes")
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult) and not first.run_requests
    assert isinstance(tick(defs, instance, first.cursor), dg.SkipReason), "nothing changed"

    (tmp_path / "notes.txt").write_text("second notes")
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    assert run_keys(second) == {"echo|greets", "silent|greets"}
    assert isinstance(tick(defs, instance, second.cursor), dg.SkipReason)

    (tmp_path / "graders").mkdir()  # the grader's cwd now resolves to this folder
    third = tick(defs, instance, second.cursor)
    assert isinstance(third, dg.SensorResult)
    assert run_keys(third) == {"echo|waves", "silent|waves"}
    assert isinstance(tick(defs, instance, third.cursor), dg.SkipReason)


def test_a_tick_loads_the_suite_again_only_when_what_its_load_read_changed(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each tick of an unchanged suite takes the code location's load (~1 s for 10,000 tests);
    an edited `.env` file or a changed variable that the suite's `${{ VAR }}` reads is seen."""
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    path.write_text(path.read_text().replace("input: say hello", "input: say ${{ DEMO_WORD }}"))
    monkeypatch.delenv("DEMO_WORD", raising=False)
    (tmp_path / ".env").write_text("DEMO_WORD=hello\n")
    loads: list[Path] = []
    real_load = sensors.load_suite

    def counted(suite_path: Path) -> LoadedSuite:
        loads.append(suite_path)
        return real_load(suite_path)

    monkeypatch.setattr(sensors, "load_suite", counted)
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    first = tick(defs, instance, None)
    assert isinstance(first, dg.SensorResult) and not first.run_requests
    assert isinstance(tick(defs, instance, first.cursor), dg.SkipReason)
    assert loads == [], "the code location's load still holds"

    monkeypatch.setenv("DEMO_WORD", "goodbye")  # the shell's value is kept over the .env's
    second = tick(defs, instance, first.cursor)
    assert isinstance(second, dg.SensorResult)
    assert run_keys(second) == {"echo|greets", "silent|greets"}
    assert len(loads) == 1
    assert isinstance(tick(defs, instance, second.cursor), dg.SkipReason)
    assert len(loads) == 1

    (tmp_path / ".env").write_text("DEMO_WORD=hello\nOTHER=1\n")
    assert isinstance(tick(defs, instance, second.cursor), dg.SkipReason), "same cases"
    assert len(loads) == 2, "the edited .env file was read again"
