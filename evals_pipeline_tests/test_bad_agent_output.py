"""An agent whose output file is valid JSON but not AgentV's output shape (an unknown role, a
wrong type, a negative number), through the real `evals-pipeline run`: what was ignored is
named in the run output and in the case's row, never a silent 0 or a negative count."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write

AGENT = """\
import json, sys
out = {
    "output": [{"role": "assistant", "content": "hello"}],
    "token_usage": {"input": 10, "output": 5},
    "cost_usd": 0.01,
    "duration_ms": 100,
}
kind = sys.argv[2]
if kind == "role":
    out["output"].insert(0, {"role": "robot", "content": "beep"})
if kind == "types":
    out["cost_usd"] = "0.01"
    out["token_usage"] = {"input": "ten", "output": 5}
if kind == "negative":
    out.update(cost_usd=-1, duration_ms=-5, token_usage={"input": -10, "output": 5})
json.dump(out, open(sys.argv[1], "w"))
"""

KINDS = ("good", "role", "types", "negative")
SUITE = (
    f"name: shapes\nexecution:\n  targets: [{', '.join(KINDS)}]\ntargets:\n"
    + "".join(
        f"  - name: {kind}\n    provider: cli\n"
        f"    command: python3 {{EVAL_DIR}}/agent.py {{OUTPUT_FILE}} {kind}\n"
        for kind in KINDS
    )
    + """\
tests:
  - id: says-hello
    input: Say hello.
    assertions:
      - type: equals
        value: hello
"""
)

SHAPE = "not AgentV's output shape: ignored"
EXPECTED = {
    "good": [],
    "role": [f'{SHAPE} output message 1={{"role": "robot", "content": "beep"}}'],
    "types": [f"{SHAPE} token_usage=", "found input='ten'", f'{SHAPE} cost_usd="0.01"'],
    "negative": [
        f"{SHAPE} token_usage=",
        "found input=-10",
        f"{SHAPE} cost_usd=-1",
        f"{SHAPE} duration_ms=-5",
    ],
}


def test_output_that_is_not_agentvs_shape_is_named_in_the_run_output_and_the_row(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project, "agent.py", AGENT)
    suite = write(project, "shapes.eval.yaml", SUITE)
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    rows = table_rows(done.stdout)
    # Each agent answered "hello": the unknown-role message is dropped, the answer stays the
    # last assistant message (as AgentV grades it), not the whole file as text.
    assert {agent: row["passed"] for agent, row in rows.items()} == dict.fromkeys(KINDS, "1")
    # Counts that were ignored are unknown ("-"), never negative nor a silent 0 (tokens and
    # cost: the table's 10th and 8th columns).
    lines = [line.split() for line in done.stdout.splitlines() if line.split()[:1] == ["negative"]]
    assert (lines[0][7], lines[0][9]) == ("-", "-"), done.explain()
    warned = done.stdout.split("\nWarnings:\n")[1].split("\n\n")[0].splitlines()
    by_agent = {line.split(" / ")[0].strip(): line for line in warned}
    assert set(by_agent) == {"role", "types", "negative"}, done.explain()
    for agent, parts in EXPECTED.items():
        for part in parts:
            assert part in by_agent[agent], (agent, part, done.explain())
    # The case's row (cases.parquet, which the case page and results read) carries them.
    table = pq.read_table(printed_report_folder(done.stdout) / "cases.parquet")
    row_warnings = {r["agent"]: " ".join(r["warnings"]) for r in table.to_pylist()}
    for agent, parts in EXPECTED.items():
        assert all(part in row_warnings[agent] for part in parts), (agent, row_warnings)
    assert row_warnings["good"] == ""
