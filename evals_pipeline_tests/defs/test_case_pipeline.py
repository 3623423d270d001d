"""One pipeline per case: a suite's agent runs, sessions and grades are one Dagster step, in
which each case is graded as soon as its agent ends (not after the last agent of the run); a
subset of the step re-makes only what it selects, from the stored records before it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.defs.suite_run import SuiteAssets, run_definitions, run_suite
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.suites import LoadedSuite, load_suite

SUITE = "piped"
TESTS = ["t0", "t1", "slow"]

# Logs "<prompt> <time>" to log/agent-ends.log beside it once done; the `slow` test sleeps 4 s.
AGENT = """\
import os, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
prompt = open(args["--prompt-file"]).read().strip()
if "slow" in prompt:
    time.sleep(4)
open(args["--output"], "w").write("done " + prompt)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "log", "agent-ends.log"), "a") as log:
    log.write(f"{prompt} {time.time()}\\n")
"""

# Logs "<test id> <time>" to log/graded.log beside it for every trial it grades.
GRADER = """\
import json, os, sys, time
payload = json.load(sys.stdin)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "log", "graded.log"), "a") as log:
    log.write(f"{payload['test_id']} {time.time()}\\n")
print(json.dumps({"score": 1.0 if "done" in (payload["output"] or "") else 0.0}))
"""


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LoadedSuite:
    project = tmp_path / "project"
    (project / "log").mkdir(parents=True)
    (project / ".git").mkdir()  # upward searches for .agentv stop here
    monkeypatch.setenv(WRITABLE_VAR, str(project / "log"))
    (project / "agent.py").write_text(AGENT)
    (project / "grader.py").write_text(GRADER)
    grader = f"[{{type: code-grader, command: [{sys.executable}, grader.py]}}]"
    path = project / f"{SUITE}.eval.yaml"
    path.write_text(
        f"name: {SUITE}\nexecution: {{targets: [a], workers: 2}}\ntargets:\n"
        "  - {name: a, provider: cli, command: 'python3 {EVAL_DIR}/agent.py "
        "--prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}'}\ntests:\n"
        + "".join(f"  - {{id: {t}, input: {t}, assertions: {grader}}}\n" for t in TESTS)
    )
    return load_suite(path)


def _log(suite: LoadedSuite, name: str) -> list[tuple[str, float]]:
    lines = (suite.base_dir / "log" / name).read_text().split("\n")
    return [(line.split()[0], float(line.split()[1])) for line in lines if line]


def _run(suite: LoadedSuite, instance: dg.DagsterInstance, storage: Path) -> list[str]:
    outcome = run_suite(
        instance, suite, str(storage), agents=["a"], case_keys=TESTS, echo=lambda _: None
    )
    [summary] = outcome.report.agents
    assert (summary.cases, summary.passed) == (3, 3)
    return outcome.run_ids


def test_a_case_is_graded_in_the_step_that_ran_its_agent_as_its_agent_ends(
    suite: LoadedSuite, tmp_path: Path
) -> None:
    with dg.instance_for_test() as instance:
        layers_run, *_ = _run(suite, instance, tmp_path / "storage")
        done = instance.all_logs(layers_run, of_type=dg.DagsterEventType.STEP_SUCCESS)
        steps = {(e.step_key or "").split("__", 1)[-1] for e in done}
        materialized = instance.all_logs(
            layers_run, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        )
        by_key: dict[str, set[str]] = {}
        for event in materialized:
            materialization = event.asset_materialization
            assert materialization is not None
            layer = materialization.asset_key.path[-1]
            by_key.setdefault(layer, set()).add(str(materialization.partition))
    # One step resolves the cases, runs the agents, makes the sessions and grades the cases:
    # no step of its own for the cases before the first agent starts.
    assert steps == {"case_pipeline", "judgments"}
    # Each of its four layers has a materialization per partition, with its own figures.
    partitions = {str(partition_key(t, "a")) for t in TESTS}
    for layer in ("cases", "agent_runs", "sessions", "grades"):
        assert by_key[layer] == partitions, layer
    ends = dict(_log(suite, "agent-ends.log"))
    graded = dict(_log(suite, "graded.log"))
    assert sorted(graded) == sorted(TESTS)  # each case graded once
    # The quick cases were graded while the slow agent still ran.
    assert graded["t0"] < ends["slow"] and graded["t1"] < ends["slow"]


def _materialize(
    suite: LoadedSuite, instance: dg.DagsterInstance, storage: Path, layers: list[str]
) -> dg.ExecuteInProcessResult:
    """Only `layers` of the suite's three tests materialized, as a UI launch of them does."""
    assets = SuiteAssets.of(suite)
    defs = dg.Definitions.merge(
        run_definitions(suite, str(storage), assets=assets),
        dg.Definitions(
            jobs=[
                dg.define_asset_job(
                    "subset", selection=[dg.AssetKey([SUITE, layer]) for layer in layers]
                )
            ]
        ),
    )
    tags: dict[str, Any] = {
        "dagster/asset_partition_range_start": str(partition_key(TESTS[0], "a")),
        "dagster/asset_partition_range_end": str(partition_key(TESTS[-1], "a")),
    }
    return defs.resolve_job_def("subset").execute_in_process(instance=instance, tags=tags)


@pytest.mark.parametrize("layers", [["grades"], ["sessions", "grades"]])
def test_a_subset_re_makes_what_it_selects_from_stored_records_and_runs_no_agent(
    suite: LoadedSuite, tmp_path: Path, layers: list[str]
) -> None:
    storage = tmp_path / "storage"
    with dg.instance_for_test() as instance:
        _run(suite, instance, storage)
        agents_before = _log(suite, "agent-ends.log")
        started = time.time()
        result = _materialize(suite, instance, storage, layers)
        assert result.success
        made = {
            event.asset_key.path[-1]
            for event in result.get_asset_materialization_events()
            if event.asset_key is not None
        }
        # Each partition's case_passes (the failures list has a check of its own).
        checks = [c for c in result.get_asset_check_evaluations() if c.partition is not None]
    assert made == set(layers)
    assert _log(suite, "agent-ends.log") == agents_before  # no agent ran
    regraded = [test for test, at in _log(suite, "graded.log") if at >= started]
    assert sorted(regraded) == sorted(TESTS)  # the stored sessions graded again
    assert sorted(c.partition for c in checks if c.passed) == sorted(
        str(partition_key(t, "a")) for t in TESTS
    )


def test_a_case_gone_from_the_file_fails_the_step_before_any_agent_runs(
    suite: LoadedSuite, tmp_path: Path
) -> None:
    """The step re-reads the suite file for its cases: a partition whose test was taken out
    after the definitions loaded fails it with the advice, and no agent starts."""
    with dg.instance_for_test() as instance:
        register_cases(instance, suite.slug, TESTS)
        text = suite.path.read_text()
        suite.path.write_text(text[: text.index("  - {id: slow")])
        with pytest.raises(dg.Failure) as failed:
            _materialize(suite, instance, tmp_path / "storage", ["cases", "agent_runs"])
    assert f"case 'slow' for agent 'a' is not in {suite.path} any more" in str(failed.value)
    assert "evals-pipeline register" in str(failed.value)
    assert not (suite.base_dir / "log" / "agent-ends.log").exists()
