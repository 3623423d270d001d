"""The `evals-pipeline` command, run as a real subprocess against real suites and a real
Dagster instance in a temporary folder.

`run` is slow (a few seconds per call), so this file makes three real runs: a mixed suite over
both targets (shared by several tests), an all-passing suite, and one `--target` run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import dagster as dg
import pyarrow.parquet as pq
import pytest

from evals_pipeline.defs.partitions import case_partitions_name

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"

# Two mock targets inline; greeter passes says-hello and says-world, leaver passes says-bye.
MIXED_SUITE = """\
name: mini
execution:
  targets: [greeter, leaver]
targets:
  - name: greeter
    provider: mock
    response: hello world
  - name: leaver
    provider: mock
    response: bye
tests:
  - id: says-hello
    input: Say hello.
    assertions:
      - type: contains
        value: hello
  - id: says-world
    input: Say world.
    assertions:
      - type: contains
        value: world
  - id: says-bye
    input: Say bye.
    assertions:
      - type: contains
        value: bye
"""

REPORT_FILES = [
    "report.html",
    "cases",
    "summary.md",
    "cases.parquet",
    "graders.parquet",
    "dimensions.parquet",  # heuristic dimensions, even without an LLM panel
    "results.jsonl",
    "report.json",
]


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def cli(*args: str, home: Path, cwd: Path | None = None) -> Done:
    """`evals-pipeline ARGS` in a child process, its Dagster instance and storage under `home`."""
    env = dict(os.environ)
    env["DAGSTER_HOME"] = str(home / "dagster")
    env["EVALS_PIPELINE_STORAGE"] = str(home / "storage")
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", *args],
        env=env,
        cwd=cwd or home,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".git").mkdir(exist_ok=True)  # upward searches for .agentv stop here
    path = folder / name
    path.write_text(dedent(text), encoding="utf-8")
    return path


def table_rows(stdout: str) -> dict[str, dict[str, str]]:
    """The printed per-agent table as {agent: {header: cell}}."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("agent "))
    assert set(lines[start + 1]) <= {"-", " "}, lines[start + 1]
    headers = ["agent", "cases", "passed", "failed", "errors", "pass_rate"]
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = dict(zip(headers, cells, strict=False))
    return rows


def counts(row: dict[str, str]) -> tuple[int, int, int, int]:
    return int(row["cases"]), int(row["passed"]), int(row["failed"]), int(row["errors"])


def failure_lines(stdout: str) -> list[str]:
    """The lines listed under "Failures and errors:", stripped."""
    lines = stdout.splitlines()
    start = lines.index("Failures and errors:")
    out = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        out.append(line.strip())
    return out


def printed_report_folder(stdout: str) -> Path:
    line = next(line for line in stdout.splitlines() if line.startswith("report: "))
    path = Path(line.removeprefix("report: "))
    assert path.name == "summary.md", line
    return path.parent


# --- validate / schema ----------------------------------------------------------------------


def test_validate_quickstart_is_ok(tmp_path: Path) -> None:
    done = cli("validate", str(QUICKSTART), home=tmp_path)
    assert done.code == 0, done.explain()
    suite_file = QUICKSTART / "quickstart.eval.yaml"
    assert done.stdout.startswith(f"ok: {suite_file} ("), done.explain()
    assert "10 tests x 2 targets = 20 partitions" in done.stdout


def test_validate_warns_of_a_typo_with_file_line_and_fix_and_strict_fails(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "broken.eval.yaml",
        """\
        name: broken
        targets:
          - name: m
            provider: mock
            response: hi
        tests:
          - id: a
            input: hi
            critera: says hi
            assertions: [{type: contains, value: hi}]
        """,
    )
    done = cli("validate", str(path), home=tmp_path)
    assert done.code == 0, done.explain()  # AgentV ignores the key too, with a warning
    assert f"warning: {path}:9:5: unknown field 'critera' in tests[0], ignored" in done.stderr
    assert "did you mean 'criteria'" in done.stderr
    assert "ok:" in done.stdout
    strict = cli("validate", "--strict", str(path), home=tmp_path)
    assert strict.code == 2, strict.explain()
    assert f"error (--strict): {path}:9:5: unknown field 'critera'" in strict.stderr
    assert "ok:" not in strict.stdout


def test_validate_accepts_a_suite_whose_target_resolves_only_when_run(tmp_path: Path) -> None:
    # As `agentv validate`: the file is valid; a target that is not defined is the run's problem.
    path = write(
        tmp_path,
        "env-target.eval.yaml",
        """\
        execution:
          target: elsewhere
        targets:
          - name: m
            provider: mock
            response: hi
        tests:
          - id: a
            input: hi
            assertions: [{type: contains, value: hi}]
        """,
    )
    done = cli("validate", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    assert f"ok: {path} (1 tests; its targets do not resolve)" in done.stdout
    assert "warning: when run: " in done.stderr and f"{path}:2:" in done.stderr, done.explain()
    done = cli("run", str(path), home=tmp_path)
    assert done.code == 2 and f"{path}:2:" in done.stderr, done.explain()


def test_validate_a_folder_without_suites_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = cli("validate", str(tmp_path / "empty"), home=tmp_path)
    assert done.code == 2, done.explain()
    assert "no suite files" in done.stderr


def test_schema_prints_the_suite_json_schema(tmp_path: Path) -> None:
    done = cli("schema", home=tmp_path)
    assert done.code == 0, done.explain()
    schema = json.loads(done.stdout)
    assert "tests" in schema["properties"]


def test_schema_targets_prints_the_targets_file_schema(tmp_path: Path) -> None:
    done = cli("schema", "--targets", home=tmp_path)
    assert done.code == 0, done.explain()
    schema = json.loads(done.stdout)
    assert "targets" in schema["properties"]
    assert "tests" not in schema["properties"]


# --- register -------------------------------------------------------------------------------


def test_register_adds_the_cases_as_partitions(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli("register", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert "mini: 3 cases registered for agents greeter, leaver" in done.stdout
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        keys = instance.get_dynamic_partitions(case_partitions_name("mini"))
    assert sorted(keys) == ["says-bye", "says-hello", "says-world"]


# --- run --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Done, Path]:
    """One `run` of the mixed suite over both targets with `--output`; shared by several tests."""
    home = tmp_path_factory.mktemp("mixed")
    suite = write(home / "project", "mini.eval.yaml", MIXED_SUITE)
    out = home / "copied-report"
    return cli("run", str(suite), "--output", str(out), home=home), out


def test_run_without_threshold_exits_0_and_prints_one_row_per_agent(
    mixed_run: tuple[Done, Path],
) -> None:
    done, _ = mixed_run
    # As `agentv eval` 4.42.4: without --threshold or execution.threshold, failures exit 0.
    assert done.code == 0, done.explain()
    rows = table_rows(done.stdout)
    assert list(rows) == ["greeter", "leaver"], done.explain()
    assert counts(rows["greeter"]) == (3, 2, 1, 0)
    assert counts(rows["leaver"]) == (3, 1, 2, 0)
    assert rows["greeter"]["pass_rate"] == "66.7%"
    assert rows["leaver"]["pass_rate"] == "33.3%"


def test_run_lists_every_failing_case(mixed_run: tuple[Done, Path]) -> None:
    done, _ = mixed_run
    failures = failure_lines(done.stdout)
    assert [line.split(":", 1)[0] for line in failures] == [
        "greeter / says-bye",
        "leaver / says-hello",
        "leaver / says-world",
    ], done.explain()
    assert failures[0] == "greeter / says-bye: score 0.00 < 0.8: contains-bye"


def test_run_output_copies_every_report_file(mixed_run: tuple[Done, Path]) -> None:
    done, out = mixed_run
    assert sorted(p.name for p in out.iterdir()) == sorted(REPORT_FILES), done.explain()
    assert printed_report_folder(done.stdout) == out.resolve()
    assert f"html: {out.resolve() / 'report.html'}" in done.stdout.splitlines()
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# Eval report: mini")
    assert "- leaver / says-world: score 0.00 < 0.8: contains-world" in summary
    assert pq.read_table(out / "cases.parquet").num_rows == 6
    assert pq.read_table(out / "graders.parquet").num_rows == 6  # one grader per case
    report = json.loads((out / "report.json").read_text())
    assert [a["agent"] for a in report["agents"]] == ["greeter", "leaver"]
    assert len(report["failures"]) == 3


def test_run_results_jsonl_has_one_line_per_case_and_agent(mixed_run: tuple[Done, Path]) -> None:
    done, out = mixed_run
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((r["target"], r["test_id"]) for r in lines) == [
        (agent, test)
        for agent in ["greeter", "leaver"]
        for test in ["says-bye", "says-hello", "says-world"]
    ], done.explain()
    expected_scores = {
        ("greeter", "says-hello"): 1.0,
        ("greeter", "says-world"): 1.0,
        ("greeter", "says-bye"): 0.0,
        ("leaver", "says-hello"): 0.0,
        ("leaver", "says-world"): 0.0,
        ("leaver", "says-bye"): 1.0,
    }
    for line in lines:
        assert {"test_id", "target", "score", "scores"} <= line.keys()
        assert line["suite"] == "mini"
        assert line["score"] == expected_scores[line["target"], line["test_id"]]
        [grader] = line["scores"]
        assert {"name", "type", "score", "verdict", "assertions"} <= grader.keys()
        assert grader["type"] == "contains"
        assert grader["verdict"] == ("pass" if line["score"] == 1.0 else "fail")
        assert len(grader["assertions"]) == 1
        assert grader["assertions"][0]["passed"] is (line["score"] == 1.0)


def test_run_exits_0_when_every_case_passes(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "project",
        "green.eval.yaml",
        """\
        name: green
        execution: {targets: [echo]}
        targets:
          - name: echo
            provider: mock
            response: all good here
        tests:
          - id: good
            input: Are you good?
            assertions: [{type: contains, value: good}]
          - id: here
            input: Where?
            assertions: [{type: icontains, value: HERE}]
        """,
    )
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert counts(table_rows(done.stdout)["echo"]) == (2, 2, 0, 0)
    assert "Failures and errors:" not in done.stdout
    # Without --output, the report lives in the storage root given by EVALS_PIPELINE_STORAGE.
    folder = printed_report_folder(done.stdout)
    assert folder.is_relative_to(tmp_path / "storage" / "green" / "eval_report"), done.explain()
    assert sorted(p.name for p in folder.iterdir()) == sorted(REPORT_FILES)


def test_run_with_target_runs_only_that_target(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli("run", str(suite), "--target", "greeter", "--threshold", "0.8", home=tmp_path)
    assert done.code == 1, done.explain()  # greeter's says-bye scores 0 < 0.8
    rows = table_rows(done.stdout)
    assert counts(rows["greeter"]) == (3, 2, 1, 0), done.explain()
    assert "leaver" not in rows  # registered, but not run by this command
    assert failure_lines(done.stdout) == ["greeter / says-bye: score 0.00 < 0.8: contains-bye"]
    results = printed_report_folder(done.stdout) / "results.jsonl"
    targets = {json.loads(line)["target"] for line in results.read_text().splitlines()}
    assert targets == {"greeter"}
    # Nothing ran for leaver: no agent run folders under its name.
    agent_runs = tmp_path / "storage" / "mini" / "agent_runs"
    assert list(agent_runs.glob("*/greeter")), done.explain()
    assert not list(agent_runs.glob("*/leaver"))


def test_a_target_run_reports_only_its_agents_not_others_stored_results(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    both = cli("run", str(suite), home=tmp_path)
    assert set(table_rows(both.stdout)) == {"greeter", "leaver"}, both.explain()
    done = cli("run", str(suite), "--target", "leaver", home=tmp_path)
    assert done.code == 0, done.explain()
    rows = table_rows(done.stdout)
    # greeter's results from the first run are stored, but this command did not run it.
    assert list(rows) == ["leaver"], done.explain()
    assert counts(rows["leaver"]) == (3, 1, 2, 0)
    folder = printed_report_folder(done.stdout)
    report = json.loads((folder / "report.json").read_text())
    assert [a["agent"] for a in report["agents"]] == ["leaver"]
    lines = (folder / "results.jsonl").read_text().splitlines()
    assert {json.loads(line)["target"] for line in lines} == {"leaver"}
    assert "greeter" not in failure_lines(done.stdout)[0]
    assert "greeter" not in (folder / "summary.md").read_text()
    # Only the HTML's history (the trend over earlier reports, by run) may name greeter.
    sections = (folder / "report.html").read_text().split('<section id="')
    shown = {part.split('"')[0]: part for part in sections[1:]}
    assert {"agents", "cases", "since"} <= set(shown)
    assert [name for name, part in shown.items() if "greeter" in part] == ["since"]


def test_run_with_unknown_target_exits_2_naming_the_valid_ones(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli("run", str(suite), "--target", "nope", home=tmp_path)
    assert done.code == 2, done.explain()
    assert "target 'nope'" in done.stderr
    assert "its targets are: greeter, leaver" in done.stderr
    assert not (tmp_path / "storage").exists()


def test_run_with_test_id_globs_runs_only_matching_tests(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli(
        "run",
        str(suite),
        "--target",
        "greeter",
        "--test-id",
        "says-h*",
        "--test-id",
        "says-bye",
        "--threshold",
        "0.8",
        home=tmp_path,
    )
    assert done.code == 1, done.explain()  # greeter's says-bye scores 0 < 0.8
    results = printed_report_folder(done.stdout) / "results.jsonl"
    ran = {json.loads(line)["test_id"] for line in results.read_text().splitlines()}
    assert ran == {"says-hello", "says-bye"}


def test_run_with_test_id_matching_nothing_exits_2(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli("run", str(suite), "--test-id", "nope-*", home=tmp_path)
    assert done.code == 2, done.explain()
    assert "no test of" in done.stderr and "nope-*" in done.stderr
    assert not (tmp_path / "storage").exists()


HALF_SUITE = """\
name: half
tags: [nightly]
targets:
  - name: greeter
    provider: mock
    response: hello
tests:
  - id: half-right
    input: Say hello world.
    assertions:
      - type: contains
        value: hello
      - type: contains
        value: world
  - id: strict
    input: Say hello world.
    execution:
      threshold: 0.9
    assertions:
      - type: contains
        value: hello
      - type: contains
        value: world
"""


def test_run_threshold_is_the_pass_score_of_tests_without_their_own(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "half.eval.yaml", HALF_SUITE)
    done = cli("run", str(suite), "--threshold", "0.5", home=tmp_path)
    # As `agentv eval` 4.42.4: the exit code compares each score with --threshold itself, so
    # `strict` (0.5, failed under its own 0.9) does not make the run exit 1.
    assert done.code == 0, done.explain()
    results = printed_report_folder(done.stdout) / "results.jsonl"
    status = {
        row["test_id"]: row["execution_status"]
        for row in map(json.loads, results.read_text().splitlines())
    }
    assert status == {"half-right": "ok", "strict": "quality_failure"}


def test_run_threshold_outside_0_to_1_is_a_usage_error(tmp_path: Path) -> None:
    suite = write(tmp_path / "project", "half.eval.yaml", HALF_SUITE)
    done = cli("run", str(suite), "--threshold", "80", home=tmp_path)
    assert done.code == 2 and "80 is not between 0 and 1" in done.stderr, done.explain()


def test_run_tag_filters_pick_suites_by_their_tags(tmp_path: Path) -> None:
    tagged = write(tmp_path / "project", "half.eval.yaml", HALF_SUITE)
    untagged = write(tmp_path / "project", "mini.eval.yaml", MIXED_SUITE)
    done = cli("run", str(tagged), str(untagged), "--exclude-tag", "nightly", home=tmp_path)
    assert f"{tagged}: skipped (tags ['nightly'])" in done.stdout, done.explain()
    assert "mini: 3 cases" in done.stdout and "half: " not in done.stdout
    done = cli("run", str(tagged), str(untagged), "--tag", "nightly", home=tmp_path)
    assert f"{untagged}: skipped (tags none)" in done.stdout, done.explain()
    assert "half: 2 cases" in done.stdout and "mini: " not in done.stdout


def test_a_300_character_test_id_runs(tmp_path: Path) -> None:
    long_id = "fix-the-" + "very-" * 58 + "long-bug"  # 306 characters: past a file name's 255
    path = write(
        tmp_path,
        "long.eval.yaml",
        f"""\
        targets:
          - name: m
            provider: mock
            response: hi
        tests:
          - id: {long_id}
            input: hi
            assertions: [{{type: contains, value: hi}}]
        """,
    )
    done = cli("run", str(path), "--keep-workspaces", home=tmp_path)
    assert done.code == 0, done.explain()
    assert counts(table_rows(done.stdout)["m"]) == (1, 1, 0, 0), done.explain()
    [result] = (printed_report_folder(done.stdout) / "results.jsonl").read_text().splitlines()
    assert json.loads(result)["test_id"] == long_id


def test_keep_workspaces_keeps_a_passing_runs_workspace_without_a_workspace_spec(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "bare.eval.yaml",
        """\
        targets: [{name: m, provider: mock, response: hi}]
        tests: [{id: t, input: hi, assertions: [{type: contains, value: hi}]}]
        """,
    )

    def workspaces() -> list[Path]:
        return [p for p in (tmp_path / "storage").rglob("workspace") if p.is_dir()]

    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    assert workspaces() == []  # a passing run's workspace goes (AgentV's rule)
    done = cli("run", str(path), "--keep-workspaces", "--no-cache", home=tmp_path)
    assert done.code == 0, done.explain()
    [kept] = workspaces()
    assert (kept / ".git").exists()  # the run's own workspace, its baseline link in it


def test_tests_choose_among_the_runs_targets_as_in_agentv(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "pick.eval.yaml",
        """\
        name: pick
        execution:
          targets: [a, b]
        targets:
          - {name: a, provider: mock, response: hello}
          - {name: b, provider: mock, response: bye}
        tests:
          - id: both
            input: hi
            assertions: [{type: contains, value: hello}]
          - id: only-a
            input: hi
            execution: {targets: [a]}
            assertions: [{type: contains, value: hello}]
          - id: only-b
            input: hi
            execution: {targets: [b]}
            assertions: [{type: contains, value: bye}]
          - id: names-an-undefined-target
            input: hi
            execution: {target: azure-llm}
            assertions: [{type: contains, value: bye}]
        """,
    )
    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    # AgentV 4.42.4 never reads a test's execution.target: that test runs on both targets.
    assert "execution.target is ignored, as in AgentV 4.42.4" in done.stderr, done.explain()
    rows = table_rows(done.stdout)
    assert counts(rows["a"]) == (3, 2, 1, 0) and counts(rows["b"]) == (3, 2, 1, 0), done.explain()
    report = json.loads((printed_report_folder(done.stdout) / "report.json").read_text())
    assert report["not_run"] == 0
    # One `--target` is the run's only target (AgentV's cliTargets): every test runs on it.
    done = cli("run", str(path), "--target", "b", home=tmp_path)
    rows = table_rows(done.stdout)
    assert "pick: 4 cases x b\n" in done.stdout, done.explain()
    assert counts(rows["b"]) == (4, 2, 2, 0), done.explain()
