"""Adding an agent is one module: an agent written outside evals_pipeline (its target model,
adapter, stream reader and format sniff, and tool names in one file), installed under the
`evals_pipeline.agents` entry point, is a provider a suite can name, validated, run and graded
through the real CLI, and its recorded streams are recognised by `import` and `replay`, with no
file of evals_pipeline edited."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evals_pipeline.storage.records import read_records
from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write
from evals_pipeline_tests.test_sandbox import needs_bwrap

AGENT_MODULE = '''\
"""echo-agent: answers with its target's greeting and the prompt, as a JSONL stream, with what
its sandboxed child read of its login file in the runner's home."""

import json
import os
from typing import Literal

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.agents.kind import AgentKind, AgentStream
from evals_pipeline.enrichers.builder import ParsedStream, SessionBuilder
from evals_pipeline.enrichers.jsonl import Source, iter_jsonl
from evals_pipeline.enrichers.tool_names import ToolNames
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import TargetBase
from evals_pipeline.process import child_env, now_ms, run_process
from evals_pipeline.sandbox.policy import SandboxPolicy


class EchoTarget(TargetBase):
    provider: Literal["echo-agent"]
    agentv_aliases = ("echo",)
    greeting: str = "hello"


class EchoAdapter:
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        assert isinstance(case.target, EchoTarget)
        start = now_ms()
        answer = f"{case.target.greeting}: {case.prompt.strip()}"
        login = os.path.join(os.environ["HOME"], ".echo", "login.json")
        home = ctx.artifacts / "home"
        home.mkdir(parents=True, exist_ok=True)
        read = run_process(
            ["cat", login],
            cwd=ctx.workspace,
            env=child_env({"HOME": str(home)}),
            timeout_seconds=60,
            sandbox=SandboxPolicy(writable=(ctx.workspace,), home=home),
        )
        seen = {"login_read": read.stdout.decode(), "login_exit": read.exit_code}
        lines = [{"echo_session": "e-1"}, seen, {"echo": answer}]
        ctx.stdout_path.write_text("".join(json.dumps(line) + "\\n" for line in lines))
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


def read_echo(source: Source, _session_file: Source | None) -> ParsedStream:
    builder = SessionBuilder("echo-agent", TOOLS)
    for _, line in iter_jsonl(source, builder.warnings):
        if "echo_session" in line:
            builder.session.session_id = line["echo_session"]
        elif "echo" in line:
            builder.message("assistant", line["echo"], turn_index=0)
    return builder.finish()


def sniff_echo(line: dict) -> str | None:
    return "echo-jsonl" if "echo_session" in line else None


TOOLS = ToolNames({"Echo": "Read"})

AGENT = AgentKind(
    target=EchoTarget,
    adapter=EchoAdapter(),
    stream=AgentStream(formats=("echo-jsonl",), reader=read_echo, tool_names=TOOLS, sniff=sniff_echo),
    logins=(".echo",),
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
        for _, record in read_records(path):
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


@needs_bwrap
def test_an_installed_agents_login_is_hidden_from_sandboxed_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's `logins` join the stores no sandboxed child reads: the agent's own child
    finds no login file in the runner's home although the file is there."""
    install_plugin(tmp_path / "site", monkeypatch)
    # Outside /tmp, which the sandbox's private /tmp would hide anyway.
    home = Path(os.environ["HOME"]) / f".evals-plugin-home-{secrets.token_hex(4)}"
    login = home / ".echo" / "login.json"
    token = f"echo-login-{secrets.token_hex(8)}"
    try:
        login.parent.mkdir(parents=True)
        login.write_text(token)
        monkeypatch.setenv("HOME", str(home))
        suite = write(tmp_path / "project", "echo.eval.yaml", SUITE)
        done = cli("run", str(suite), home=tmp_path)
        assert done.code == 0, done.explain()
        streams = [
            json.loads(line)
            for path in (tmp_path / "storage").rglob("stdout.txt")
            for line in path.read_text().splitlines()
        ]
        seen = [line for line in streams if "login_exit" in line]
        assert seen == [{"login_read": "", "login_exit": 1}], done.explain()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_near_miss_of_an_installed_agent_says_did_you_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path / "site", monkeypatch)
    suite = write(tmp_path / "project", "echo.eval.yaml", SUITE.replace("Echo,", "echo-agnet,"))
    checked = cli("validate", str(suite), home=tmp_path)
    said = checked.stdout + checked.stderr
    assert "echo.eval.yaml:4" in said and "did you mean 'echo-agent'" in said, checked.explain()


def test_an_installed_agents_recording_is_imported_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`import` and a `replay` target tell an installed agent's stream from its own sniff (the
    registry's), and read it with its own reader."""
    install_plugin(tmp_path / "site", monkeypatch)
    lines = [{"echo_session": "rec-7"}, {"echo": "bonjour: say hi"}]
    recorded = write(
        tmp_path / "recorded", "greets.jsonl", "".join(f"{json.dumps(x)}\n" for x in lines)
    )
    sessions = tmp_path / "project" / "sessions"
    imported = cli("import", str(recorded), "--into", str(sessions), home=tmp_path)
    assert imported.code == 0, imported.explain()
    assert "echo-agent session rec-7" in imported.stdout, imported.explain()
    other = write(tmp_path / "recorded", "notes.jsonl", '{"role": "user", "content": "hi"}\n')
    refused = cli("import", str(other), "--into", str(sessions), home=tmp_path)
    assert "not a claude-code, codex, pi-agent or echo-agent session" in refused.stderr
    replayed = SUITE.replace(
        "{name: echo, provider: Echo, greeting: bonjour}",
        "{name: echo, provider: replay, sessions_dir: sessions}",
    )
    suite = write(tmp_path / "project", "echo.eval.yaml", replayed)
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    assert table_rows(done.stdout)["echo"]["passed"] == "1", done.explain()
    assert "echo-agent" in stored_agent_kinds(tmp_path / "storage"), done.explain()
