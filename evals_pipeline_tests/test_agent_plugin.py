"""Adding an agent is one module: an agent written outside evals_pipeline (its target model,
adapter, stream parser and tool names in one file), installed under the `evals_pipeline.agents`
entry point, is a provider a suite can name, validated, run and graded through the real CLI,
with no file of evals_pipeline edited."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write

AGENT_MODULE = '''\
"""echo-agent: answers with its target's greeting and the prompt, as a JSONL stream."""

import json
from typing import Literal

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.events import EnrichedSession
from evals_pipeline.models.messages import Message
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import TargetBase
from evals_pipeline.process import now_ms


class EchoTarget(TargetBase):
    provider: Literal["echo-agent"]
    agentv_aliases = ("echo",)
    greeting: str = "hello"


class EchoAdapter:
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        assert isinstance(case.target, EchoTarget)
        start = now_ms()
        answer = f"{case.target.greeting}: {case.prompt.strip()}"
        ctx.stdout_path.write_text(json.dumps({"echo": answer}) + "\\n")
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            stdout_path=str(ctx.stdout_path),
            stream_kind="echo-agent",
            exit_code=0,
            start_ms=start,
            end_ms=now_ms(),
            workspace_path=str(ctx.workspace),
        )


def parse_echo(text: str, _session_file: str | None) -> EnrichedSession:
    answer = " ".join(json.loads(line)["echo"] for line in text.splitlines() if line)
    return EnrichedSession(
        agent_kind="echo-agent",
        messages=[Message(role="assistant", content=answer)],
        final_answer=answer,
    )


AGENT = AgentKind(
    target=EchoTarget,
    adapter=EchoAdapter(),
    stream=AgentStream(
        formats=("echo-jsonl",), parser=parse_echo, tool_names=ToolNames({"Echo": "Read"})
    ),
)
'''

# What `pip install` of a one-module distribution declaring the entry point leaves on the path.
ENTRY_POINTS = "[evals_pipeline.agents]\necho-agent = echo_agent:AGENT\n"

SUITE = """\
name: echoes
execution: {target: echo}
targets:
  - {name: echo, provider: Echo, greeting: bonjour}
tests:
  - id: greets
    input: say hi
    assertions: [{type: contains, value: "bonjour: say hi"}]
"""


def install_plugin(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent module and its distribution's metadata on the children's path."""
    write(site, "echo_agent.py", AGENT_MODULE)
    info = site / "echo_agent-0.1.dist-info"
    write(info, "METADATA", "Metadata-Version: 2.1\nName: echo-agent\nVersion: 0.1\n")
    write(info, "entry_points.txt", ENTRY_POINTS)
    path = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))


def stored_agent_kinds(storage: Path) -> set[str]:
    """The agent kinds of the stored sessions (the `sessions` step's records)."""
    kinds = set()
    for path in storage.rglob("sessions/*/records.parquet"):
        for record in pq.read_table(path).column("record_json").to_pylist():
            kinds.add(json.loads(record).get("agent_kind"))
    return kinds


def test_an_agent_in_one_installed_module_runs_a_suite_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch)
    suite = write(tmp_path / "project", "echo.eval.yaml", SUITE)
    checked = cli("validate", str(suite), home=tmp_path)
    assert checked.code == 0, checked.explain()
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert table_rows(done.stdout)["echo"]["passed"] == "1", done.explain()
    # The run went through the agent's adapter and its session through the agent's parser.
    table = pq.read_table(printed_report_folder(done.stdout) / "cases.parquet")
    assert [row["agent"] for row in table.to_pylist()] == ["echo"]
    assert "echo-agent" in stored_agent_kinds(tmp_path / "storage"), done.explain()


def test_a_near_miss_of_an_installed_agent_says_did_you_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch)
    suite = write(tmp_path / "project", "echo.eval.yaml", SUITE.replace("Echo,", "echo-agnet,"))
    checked = cli("validate", str(suite), home=tmp_path)
    said = checked.stdout + checked.stderr
    assert "echo.eval.yaml:4" in said and "did you mean 'echo-agent'" in said, checked.explain()
