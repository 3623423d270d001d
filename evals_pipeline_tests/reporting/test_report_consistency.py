"""The report agrees with itself and with the runner: a figure its charts and its tables both show
is the same number, durations are the wall time the runner measured (not the agent's own
figure), and a report made by `dagster asset materialize` says where it went."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.reporting import build_report
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.dagster_dev import BIN
from evals_pipeline_tests.executor_passes import workers_with
from evals_pipeline_tests.test_cli import cli, write

PERCENT = re.compile(r"(\d+\.\d)%")


def suite_of(folder: Path, tests: list[tuple[str, str]]) -> Path:
    """Two mock agents: `echo` answers 'hello world', `silent` nothing."""
    lines = [
        "name: demo",
        "execution: {targets: [echo, silent], workers: 2}",
        "targets:",
        "  - {name: echo, provider: mock, response: 'hello world'}",
        "  - {name: silent, provider: mock, response: ''}",
        "tests:",
    ]
    lines += [
        f"  - {{id: {test_id}, input: say {word}, assertions: [{{type: contains, value: {word}}}]}}"
        for test_id, word in tests
    ]
    return write(folder, "demo.eval.yaml", "\n".join(lines) + "\n")


def newest_report(home: Path, suite: str = "demo") -> Path:
    folders = (home / "storage" / suite / "eval_report").iterdir()
    return max(folders, key=lambda f: json.loads((f / "report.json").read_text())["created_ms"])


def section(html: str, id_: str) -> str:
    return html.split(f'id="{id_}"')[1].split("</section>")[0]


def agent_row(html: str, agent: str) -> str:
    """The table row of `agent` in an HTML fragment."""
    rows = re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
    return next(r for r in rows if f"<strong>{agent}</strong>" in r)


def agent_rate(html: str, agent: str) -> str:
    """`agent`'s pass rate in the page's agents table."""
    return PERCENT.findall(agent_row(section(html, "agents"), agent).split("</td>")[5])[0]


def test_since_previous_table_agrees_with_the_trend_and_the_agents_table(tmp_path: Path) -> None:
    """A case added between two runs: echo passes 1/1, then 1/2. The table's before and after
    are the trend's last two points and the agents table's rate; the paired figures (1/1 both
    times) are labelled as such."""
    project = tmp_path / "project"
    first = cli("run", str(suite_of(project, [("greets", "hello")])), home=tmp_path)
    assert first.code == 0, first.stderr
    suite = suite_of(project, [("greets", "hello"), ("waves", "wave")])
    second = cli("run", str(suite), home=tmp_path)
    assert second.code == 0, second.stderr  # waves fails for both: no threshold, exit 0
    html = (newest_report(tmp_path) / "report.html").read_text()
    since = section(html, "since")
    # Each agent's row: before and after are the two reports' agents-table pass rates.
    for agent, before, after in (("echo", "100.0", "50.0"), ("silent", "0.0", "0.0")):
        assert agent_rate(html, agent) == after
        assert PERCENT.findall(agent_row(since, agent))[:2] == [before, after]
    # The trend plots the same figures: its last two points per agent.
    trend = dict[str, list[str]]()
    for agent, rate in re.findall(r"<title>(\w+) · [^<]* · (\d+\.\d)%</title>", since):
        trend.setdefault(agent, []).append(rate)
    assert trend == {"echo": ["100.0", "50.0"], "silent": ["0.0", "0.0"]}
    echo = agent_row(since, "echo")
    assert "-50.0 pt" in echo
    assert "100.0% → 100.0%" in echo  # the cases both runs have: greets passed both times


AGENT = """\
import json, time
time.sleep(1.2)
print(json.dumps({"text": "done", "duration_ms": 5}))
"""


def test_durations_are_the_runners_wall_time_and_a_materialized_report_says_where_it_is(
    tmp_path: Path,
) -> None:
    """An agent that takes 1.2 s and says it took 5 ms: the report, its tables and Dagster's
    metadata read ~1.2 s. Then `dagster asset materialize` of the report prints its folder and
    page."""
    project = tmp_path / "project"
    write(project, "agent.py", AGENT)
    command = f"{sys.executable} {project / 'agent.py'}"
    suite = write(
        project,
        "slow.eval.yaml",
        f"""\
        name: slow
        execution: {{target: slow}}
        targets: [{{name: slow, provider: cli, command: '{command}'}}]
        tests:
          - {{id: t1, input: go, assertions: [{{type: contains, value: done}}]}}
        """,
    )
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.stderr
    folder = newest_report(tmp_path, "slow")
    report = json.loads((folder / "report.json").read_text())
    mean = report["agents"][0]["mean_duration_ms"]
    assert 1150 <= mean < 10_000, mean
    assert pq.read_table(folder / "cases.parquet").column("duration_ms")[0].as_py() == mean
    html = (folder / "report.html").read_text()
    shown = agent_row(section(html, "agents"), "slow").split("</td>")[-2]
    assert re.search(r">\s*1\.\d s\s*$", shown), shown

    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_SUITES": str(suite),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
        WRITABLE_VAR: str(tmp_path),
    }
    command = [str(BIN / "dagster"), "asset", "materialize", "-m", "evals_pipeline.definitions"]
    with workers_with(env) as env:
        materialized = subprocess.run(
            [*command, "--select", "slow/eval_report"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert materialized.returncode == 0, materialized.stderr
    printed = materialized.stdout + materialized.stderr
    page = re.search(r"html: (\S+/report\.html)", printed)
    assert page, printed[-3000:]
    assert Path(page.group(1)).is_file()
    assert re.search(rf"report: {re.escape(str(Path(page.group(1)).parent))}\b", printed)

    with dg.DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey(["slow", "eval_report"]))
        assert event is not None and event.asset_materialization is not None
        table = event.asset_materialization.metadata["agents"]
        assert isinstance(table, dg.TableMetadataValue)
        rows = [r.data for r in table.value.records]
        assert 1.15 <= rows[0]["mean_duration_s"] < 10, rows
        grades = instance.get_latest_materialization_event(dg.AssetKey(["slow", "grades"]))
        assert grades is not None and grades.asset_materialization is not None
        duration = grades.asset_materialization.metadata["duration_s"].value
        assert 1.15 <= float(duration) < 10, duration  # type: ignore[arg-type]


def test_a_grade_of_format_1_reads_its_agent_reported_duration_as_no_wall_time() -> None:
    """Format 1's `duration_ms` was the agent's own figure: it does not pass for the runner's."""
    stored = {"format_version": 1, "trial": 0, "score": 1.0, "verdict": "pass"}
    old = CaseGrade.model_validate(
        {"case_key": "c", "test_id": "c", "agent": "a", "threshold": 0.8, "score": 1.0,
         "verdict": "pass", "execution_status": "ok", "format_version": 1,
         "trials": [{**stored, "execution_status": "ok", "duration_ms": 5}]}
    )  # fmt: skip
    trial = old.trials[0]
    assert trial.format_version == 2 and trial.wall_ms is None
    assert "duration_ms" not in trial.model_dump()
    assert build_report("s", [old], agents=["a"]).agents[0].mean_duration_ms is None
