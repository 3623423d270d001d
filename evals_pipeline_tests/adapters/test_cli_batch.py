"""provider_batching: one real runner process per eval file, agent and trial, records routed by id."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from textwrap import dedent

import pandas as pd
import pytest

from evals_pipeline.adapters.cli_batch import output_document, read_records
from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.sandbox.detection import SANDBOX_VAR
from evals_pipeline.suites import load_suite, resolve_cases


@pytest.fixture(autouse=True)
def sandbox_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner logs its invocations in the eval file's folder, which the sandbox keeps
    read-only (a batch runner writes only its run folder there: test_sandbox.py)."""
    monkeypatch.setenv(SANDBOX_VAR, "off")


RUNNER = """\
import json, sys, time
import yaml

mode = sys.argv[1]
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
with open("invocations.log", "a") as log:
    log.write(json.dumps({"eval": args["--eval"], "attempt": args["--attempt"]}) + "\\n")
if mode == "crash":
    sys.stderr.write("runner exploded: no database\\n")
    sys.exit(3)
if mode == "sleep":
    time.sleep(30)
tests = yaml.safe_load(open(args["--eval"]))["tests"]
with open(args["--output"], "w") as out:
    out.write(json.dumps({"id": "not-in-this-suite", "text": "ignored"}) + "\\n")
    for test in tests:
        if mode == "missing" and test["id"] == "b":
            continue
        record = {"id": test["id"], "text": "answer " + test["id"]}
        if test["id"] == "c":
            record = {
                "id": "c",
                "output": [
                    {"role": "assistant", "tool_calls": [
                        {"tool": "lookup", "input": {"q": 1}, "output": {"hit": True}},
                        {"tool": "decide", "input": {}, "output": "REVIEW"},
                    ]},
                    {"role": "assistant", "content": "answer c"},
                ],
                "token_usage": {"input": 40, "output": 10},
                "cost_usd": 0.25,
                "duration_ms": 1234,
            }
        out.write(json.dumps(record) + "\\n")
        if mode == "duplicate" and test["id"] == "b":
            out.write(json.dumps(record) + "\\n")
"""

SUITE = """\
name: batch
execution:
  targets: [batch, plain]
  trials: {{count: {trials}}}
assertions:
  - name: mentions-id
    type: contains
    value: answer
  - name: trajectory
    type: tool-trajectory
    mode: in_order
    expected: [{{tool: lookup}}, {{tool: decide}}]
tests:
  - {{id: a, input: screen a, assertions: []}}
  - {{id: b, input: screen b, assertions: []}}
  - {{id: c, input: screen c, assertions: []}}
  - {{id: d, input: screen d, assertions: []}}
  - {{id: e, input: screen e, assertions: []}}
"""


def write_project(
    tmp_path: Path, mode: str = "ok", trials: int = 1, target_extra: str = ""
) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / ".agentv").mkdir(exist_ok=True)
    command = (
        f"{sys.executable} runner.py {mode} --eval {{EVAL_FILE}} --output {{OUTPUT_FILE}} "
        "--attempt {ATTEMPT}"
    )
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        dedent(
            f"""\
            targets:
              - name: batch
                provider: cli
                provider_batching: true
                command: {command}
                timeout_seconds: 5
            {target_extra}
              - name: plain
                provider: mock
                response: answer from the plain target
            """
        )
    )
    suite = tmp_path / "batch.eval.yaml"
    suite.write_text(SUITE.format(trials=trials))
    return suite


def cases_of(suite: Path, agent: str | None = None) -> list[ResolvedCase]:
    cases = resolve_cases(load_suite(suite))
    return [c for c in cases if agent is None or c.agent == agent]


def invocations(tmp_path: Path) -> list[dict[str, str]]:
    log = tmp_path / "invocations.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def by_case(items: list) -> dict[tuple[str, str], object]:
    return {(i.agent, i.case_key): i for i in items}


def test_one_invocation_routes_every_record_to_its_test(tmp_path: Path) -> None:
    suite = write_project(tmp_path)
    cases = cases_of(suite)
    step = tmp_path / "step"
    runs = run_agents(cases, step, workers=4)
    assert invocations(tmp_path) == [{"eval": str(suite.resolve()), "attempt": "0"}]
    assert [(r.agent, r.case_key) for r in runs] == [(c.agent, c.case_key) for c in cases]
    assert all(r.error is None for r in runs)
    sessions = by_case(enrich_runs(runs, step))
    assert sessions[("batch", "a")].output == "answer a"
    assert sessions[("plain", "a")].output == "answer from the plain target"
    c = sessions[("batch", "c")]
    assert c.output == "answer c"
    assert c.trace_summary.tool_calls == {"lookup": 1, "decide": 1}
    assert c.token_usage is not None and (c.token_usage.input, c.token_usage.output) == (40, 10)
    assert (c.cost_usd, c.duration_ms) == (0.25, 1234)
    # A record without duration_ms gets the invocation's wall time divided by its tests.
    run_a = by_case(runs)[("batch", "a")]
    assert sessions[("batch", "a")].duration_ms == round(run_a.duration_ms / 5)
    # The messages Parquet holds the record's tool calls, as for a per-test cli run.
    messages = pd.read_parquet(c.messages_path)
    assert [call["tool"] for call in messages.iloc[0]["tool_calls"]] == ["lookup", "decide"]

    grades = by_case(grade_cases(cases, list(sessions.values()), workers=2))
    scores = {
        key: {g.name: g.score for g in grade.trials[0].graders} for key, grade in grades.items()
    }
    assert scores[("batch", "c")] == {"mentions-id": 1.0, "trajectory": 1.0}
    assert scores[("batch", "a")] == {"mentions-id": 1.0, "trajectory": 0.0}


def test_a_missing_record_is_that_tests_error(tmp_path: Path) -> None:
    suite = write_project(tmp_path, "missing")
    runs = by_case(run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2))
    assert message_of(runs[("batch", "b")].error).startswith(
        "batch output has no record with id 'b' (5 records"
    )
    assert [k for k, r in runs.items() if r.error] == [("batch", "b")]
    sessions = by_case(enrich_runs(list(runs.values()), tmp_path / "step"))
    assert sessions[("batch", "b")].status == "agent_error"
    assert sessions[("batch", "b")].output == ""
    grade = by_case(grade_cases(cases_of(suite, "batch"), list(sessions.values()), workers=1))
    assert grade[("batch", "b")].verdict == "error"
    assert grade[("batch", "a")].trials[0].graders[0].score == 1.0


def test_a_duplicated_id_is_an_error_for_that_id(tmp_path: Path) -> None:
    suite = write_project(tmp_path, "duplicate")
    runs = by_case(run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2))
    assert message_of(runs[("batch", "b")].error) == (
        "batch output has 2 records with id 'b': ids must be unique"
    )
    assert sum(1 for r in runs.values() if r.error) == 1


def test_a_crashing_runner_is_every_tests_error_with_its_stderr(tmp_path: Path) -> None:
    suite = write_project(tmp_path, "crash")
    runs = run_agents(cases_of(suite), tmp_path / "step", workers=2)
    batch = [r for r in runs if r.agent == "batch"]
    assert len(batch) == 5 and len(invocations(tmp_path)) == 1
    for run in batch:
        assert message_of(run.error) == (
            "batch runner exited with code 3: runner exploded: no database "
            "(one invocation for 5 tests)"
        )
        assert run.stderr == "runner exploded: no database\n"
    # The other target goes on.
    assert all(r.error is None for r in runs if r.agent == "plain")


def test_a_hanging_runner_times_out_on_every_test(tmp_path: Path) -> None:
    suite = write_project(tmp_path, "sleep")
    runs = run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2)
    assert {message_of(r.error) for r in runs} == {
        "batch runner timed out after 5 s (one invocation for 5 tests)"
    }
    assert all(r.timed_out for r in runs)


def test_a_failed_healthcheck_stops_the_batch_before_the_runner(tmp_path: Path) -> None:
    healthcheck = (
        f"    healthcheck: {{command: {sys.executable} -c 'import sys; sys.exit(\"down\")'}}"
    )
    suite = write_project(tmp_path, target_extra=healthcheck)
    runs = run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2)
    assert invocations(tmp_path) == []
    assert {message_of(r.error) for r in runs} == {"healthcheck of target 'batch' failed: down"}


def test_a_subset_of_tests_still_runs_the_runner_once_on_the_whole_file(tmp_path: Path) -> None:
    suite = write_project(tmp_path)
    subset = [c for c in cases_of(suite, "batch") if c.case_key in {"b", "c", "e"}]
    runs = run_agents(subset, tmp_path / "step", workers=2)
    assert len(invocations(tmp_path)) == 1
    assert [(r.case_key, message_of(r.error)) for r in runs] == [
        ("b", None),
        ("c", None),
        ("e", None),
    ]
    # Only the step's tests get run folders; the other records are ignored.
    assert sorted(p.name for p in (tmp_path / "step" / "batch").iterdir()) == [
        ".batch",
        "b",
        "c",
        "e",
    ]


def test_a_batch_ignores_depends_on_and_fail_on_error_as_agentvs_batch_path_does(
    tmp_path: Path,
) -> None:
    suite = write_project(tmp_path, "missing")
    text = suite.read_text().replace("execution:\n", "execution:\n  fail_on_error: true\n")
    suite.write_text(
        text.replace(
            "{id: d, input: screen d, assertions: []}",
            "{id: d, input: screen d, depends_on: [b], assertions: []}",
        )
    )
    runs = by_case(run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2))
    # One invocation for all five: b has no record (an execution error), yet d, which depends
    # on it, and the tests after it are not skipped or halted.
    assert len(invocations(tmp_path)) == 1
    assert runs[("batch", "b")].error is not None
    assert {key: message_of(run.error) for (_, key), run in runs.items() if key != "b"} == {
        "a": None,
        "c": None,
        "d": None,
        "e": None,
    }


def test_each_trial_is_one_invocation(tmp_path: Path) -> None:
    suite = write_project(tmp_path, trials=2)
    runs = run_agents(cases_of(suite, "batch"), tmp_path / "step", workers=2)
    assert sorted(i["attempt"] for i in invocations(tmp_path)) == ["0", "1"]
    assert sorted((r.case_key, r.trial) for r in runs) == [
        (key, trial) for key in "abcde" for trial in (0, 1)
    ]


@pytest.mark.parametrize("spelling", ["commandTemplate", "command_template"])
def test_the_seeds_command_template_is_read_as_command_with_a_warning(
    tmp_path: Path, spelling: str
) -> None:
    suite = write_project(tmp_path)
    targets = tmp_path / ".agentv" / "targets.yaml"
    targets.write_text(targets.read_text().replace("command:", f"{spelling}:", 1))
    loaded = load_suite(suite)
    warning = next(w for w in loaded.warnings if spelling in w.message)
    assert (Path(warning.file), warning.line, warning.column) == (targets, 5, 5)
    assert (warning.message, warning.fix) == (
        f"'{spelling}' is deprecated",
        "rename it to 'command'",
    )
    assert "{EVAL_FILE}" in loaded.targets["batch"].command


def test_lines_that_are_not_records_are_named_in_the_missing_ids_error(tmp_path: Path) -> None:
    records = read_records('{"id": "a", "text": "x"}\nnot json\n[1, 2]\n{"text": "no id"}\n\n')
    assert list(records.by_id) == ["a"]
    assert records.describe_bad_lines() == (
        "3 lines were not records (line 2: not JSON: Expecting value; "
        "line 3: not an object with a string 'id'; line 4: not an object with a string 'id')"
    )


def test_a_record_becomes_a_per_test_output_file_by_agentvs_batch_rules() -> None:
    assert output_document({"id": "a", "text": {"decision": "CLEAR"}}, 7) == {
        "text": '{"decision": "CLEAR"}',
        "duration_ms": 7,
    }
    assert output_document({"id": "a", "output": [], "text": "t", "duration_ms": 3}, 7) == {
        "text": "t",
        "duration_ms": 3,
    }
    assert output_document({"id": "a"}, 7) == {"text": "", "duration_ms": 7}


SEED = Path(__file__).resolve().parents[2] / "conformance" / "seed-002-batch" / "as-written"


def test_the_seed_as_written_loads_with_its_warnings_and_runs_its_batch(tmp_path: Path) -> None:
    suite = SEED / "seed-002-batch.eval.yaml"
    loaded = load_suite(suite)
    warnings = {
        (Path(w.file).name, w.line, w.column, w.message.split(":")[0]) for w in loaded.warnings
    }
    assert {
        ("targets.yaml", 7, 5, "'commandTemplate' is deprecated"),
        ("seed-002-batch.eval.yaml", 24, 5, "'assert' is deprecated"),
        (
            "seed-002-batch.eval.yaml",
            26,
            9,
            "assertion 'decision-check' of type 'code_judge' is skipped",
        ),
        (
            "seed-002-batch.eval.yaml",
            50,
            9,
            "assertion 'decision-check' of type 'code_judge' is skipped",
        ),
    } <= warnings
    cases = resolve_cases(loaded)
    assert [c.assertions for c in cases] == [[], []]  # skipped, as agentv 4.42.4 skips them
    sessions = enrich_runs(run_agents(cases, tmp_path, workers=1), tmp_path)
    assert [json.loads(s.output or "")["decision"] for s in sessions] == ["CLEAR", "REVIEW"]
