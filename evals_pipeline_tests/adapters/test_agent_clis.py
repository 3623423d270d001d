"""The real Claude Code, Codex CLI and pi binaries, driven by the scripted model server.

Each test runs the pinned CLIs (`make agents`) in a fresh workspace against a model server on
127.0.0.1: what they write, what their streams say once enriched, how they fail, and what they
can see of the parent's environment and the user's own settings.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.enrichers import enrich_run
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.process import ENV_ALLOWLIST, NETWORK_ENV
from evals_pipeline.reaping.owner import OWNER_VAR, TOKEN_VAR
from evals_pipeline.storage.events import read_events
from evals_pipeline.storage.messages import read_messages
from evals_pipeline_tests.agent_clis import require_agent

SCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "model-scripts"
KINDS = ["claude-code", "codex", "pi-agent"]
HELLO_OUTPUT = "hello from the fake LLM"
PRICING = {"input": 3.0, "output": 15.0, "cached_input": 0.3}


def make_case(tmp_path: Path, kind: str, script: Path, **target: Any) -> ResolvedCase:
    return ResolvedCase.model_validate(
        {
            "suite": "agents",
            "suite_path": str(tmp_path / "agents.eval.yaml"),
            "case_key": "hello",
            "test_id": "hello",
            "agent": kind,
            "target": {
                "name": kind,
                "provider": kind,
                "model_server": {"script": str(script)},
                "pricing": PRICING,
                **target,
            },
            "input": [{"role": "user", "content": "Create hello.py and run it."}],
            "prompt": "Create hello.py that prints a greeting, then run it.",
            "base_dir": str(tmp_path),
            "timeout_seconds": 120,
        }
    )


def run_and_enrich(tmp_path: Path, case: ResolvedCase) -> tuple[AgentRun, Session]:
    artifacts = tmp_path / "run"
    run = run_agent(case, RunContext(artifacts, artifacts / "workspace", run_id="test-run"))
    return run, enrich_run(run, tmp_path / "session")


def served_usage(run: AgentRun) -> tuple[int, int]:
    """Input and output tokens the scripted server reported over the run's model calls."""
    replies = [
        json.loads(line)
        for line in Path(run.side_files["model_server_log"]).read_text().splitlines()
    ]
    usages = [r["usage"] for r in replies if r.get("event") == "reply" and r.get("usage")]
    return sum(u["input_tokens"] for u in usages), sum(u["output_tokens"] for u in usages)


@pytest.mark.parametrize("kind", KINDS)
def test_each_cli_does_what_the_script_says(tmp_path: Path, kind: str) -> None:
    require_agent(kind)
    run, session = run_and_enrich(tmp_path, make_case(tmp_path, kind, SCRIPTS / "hello.json"))

    assert run.error is None, run.stderr
    workspace = Path(run.workspace_path or "")
    assert (workspace / "hello.py").read_text() == f"print('{HELLO_OUTPUT}')\n"
    assert run.file_changes and "+++ b/hello.py" in run.file_changes

    assert session.status == "ok"
    assert session.output == f"Done. I created hello.py and ran it; it prints: {HELLO_OUTPUT}"
    assert session.trace_summary.tool_calls == {"Write": 1, "Bash": 1}
    assert session.trace_summary.llm_call_count == 3
    bash = read_messages(session.messages_path)[-2].tool_calls[0]
    assert bash.tool == "Bash" and HELLO_OUTPUT in str(bash.output)
    events = read_events(session.events_path or "")
    assert [e.tool for e in events if e.kind == "tool_call"] == ["Write", "Bash"]
    assert session.session_id and session.model

    # Tokens are the scripted server's own counts; cost is those tokens at the target's prices
    # (claude prices claude-sonnet-4-5 itself, at the same $3 / $15).
    served_input, served_output = served_usage(run)
    usage = session.token_usage
    assert usage is not None
    assert (usage.input + usage.cached, usage.output) == (served_input, served_output)
    expected_cost = (served_input * 3 + served_output * 15) / 1_000_000
    assert session.cost_usd == pytest.approx(expected_cost, rel=1e-6)

    reached = {m.name: m for m in session.milestones}
    assert set(reached) >= {"first_file_edit", "last_edit", "final_answer"}
    edit, answer = reached["first_file_edit"], reached["final_answer"]
    assert edit.elapsed_ms is not None and answer.elapsed_ms is not None
    assert 0 <= edit.elapsed_ms <= answer.elapsed_ms <= run.duration_ms


@pytest.mark.parametrize("kind", KINDS)
def test_each_cli_runs_in_the_os_sandbox(tmp_path: Path, kind: str) -> None:
    """The agent's own shell tool runs in the sandbox: pid 1 is bubblewrap, the runner's pid is
    no process there, and a file outside the workspace cannot be written."""
    require_agent(kind)
    outside = Path(os.environ["HOME"]) / f".evals-sandbox-{kind}"
    command = (
        "tr '\\0' ' ' < /proc/1/cmdline; echo; "
        f"test -e /proc/{os.getpid()}/environ && echo runner-visible || echo runner-hidden; "
        f"echo x > {outside} && echo wrote-outside || echo write-refused"
    )
    script = tmp_path / "probe.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"action": "bash", "command": command}]},
                {"text": "Looked around."},
            ]
        )
    )
    try:
        run, session = run_and_enrich(tmp_path, make_case(tmp_path, kind, script))
        assert run.error is None, run.stderr
        bash = read_messages(session.messages_path)[-2].tool_calls[0]
        output = str(bash.output)
        assert "bwrap" in output and "runner-hidden" in output and "write-refused" in output
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)


@pytest.mark.parametrize("kind", KINDS)
def test_a_model_error_is_an_error_whatever_the_exit_code(tmp_path: Path, kind: str) -> None:
    require_agent(kind)
    script = tmp_path / "fail.yaml"
    script.write_text("- http_error: {status: 400, message: scripted refusal}\n")
    run, session = run_and_enrich(tmp_path, make_case(tmp_path, kind, script))
    # pi exits 0 on a model error; only its stream says what happened.
    assert run.exit_code == (0 if kind == "pi-agent" else 1)
    assert run.error is not None and "scripted refusal" in message_of(run.error)
    assert (run.error.stage, run.error.kind) == ("agent", "provider")
    assert session.status == "agent_error" and session.error == run.error


@pytest.mark.parametrize("kind", KINDS)
def test_secrets_are_scrubbed_from_streams_and_sessions(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_agent(kind)
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("EVALS_TEST_API_KEY", secret)
    script = tmp_path / "leak.yaml"
    script.write_text(
        f"- tool_calls: [{{action: bash, command: 'echo {secret}'}}]\n- text: printed {secret}\n"
    )
    run, session = run_and_enrich(tmp_path, make_case(tmp_path, kind, script))
    assert run.error is None, run.stderr
    stored = [Path(run.stdout_path or ""), *(Path(p) for p in run.side_files.values())]
    for path in [*stored, Path(session.messages_path), Path(session.events_path or "")]:
        assert secret.encode() not in path.read_bytes(), path
    assert "[REDACTED:EVALS_TEST_API_KEY]" in Path(run.stdout_path or "").read_text()
    assert session.output == "printed [REDACTED:EVALS_TEST_API_KEY]"


def poisoned_home(home: Path) -> None:
    """A user's own settings that would break every run if an agent read them."""
    dead = "http://127.0.0.1:9"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_BASE_URL": dead}, "model": "poisoned"})
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'model_provider = "dead"\n[model_providers.dead]\nname = "dead"\n'
        f'base_url = "{dead}/v1"\nwire_api = "responses"\n'
    )
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True)
    (agent_dir / "models.json").write_text(
        json.dumps({"providers": {"evals": {"baseUrl": dead, "api": "openai-completions"}}})
    )
    (agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "dead"}))


@pytest.mark.parametrize("kind", KINDS)
def test_the_users_own_agent_settings_are_not_read(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_agent(kind)
    home = tmp_path / "user-home"
    poisoned_home(home)
    monkeypatch.setenv("HOME", str(home))
    run, session = run_and_enrich(tmp_path, make_case(tmp_path, kind, SCRIPTS / "hello.json"))
    assert run.error is None, run.error
    assert session.output and HELLO_OUTPUT in session.output
    assert json.loads((home / ".claude" / "settings.json").read_text())["model"] == "poisoned"


ENV_DUMP = """\
    #!{python}
    import json, os, sys
    with open({out!r}, "w") as f:
        json.dump(dict(os.environ), f)
    print(json.dumps({{"type": "result", "is_error": False, "result": "done"}}))
"""


def test_a_child_sees_only_the_allowlist_and_its_cli_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_PARENT_SECRET_TOKEN", "parent-secret-value")
    monkeypatch.setenv("SOME_UNRELATED_SETTING", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-key-123")
    dump = tmp_path / "run" / "env.json"  # the run's folder: writable in the sandbox
    fake = tmp_path / "fake-claude"
    fake.write_text(textwrap.dedent(ENV_DUMP).format(python=sys.executable, out=str(dump)))
    fake.chmod(0o755)
    case = make_case(tmp_path, "claude-code", SCRIPTS / "hello.json", executable=str(fake))
    run, _ = run_and_enrich(tmp_path, case)
    assert run.error is None, run.stderr
    env = json.loads(dump.read_text())
    cli_variables = {
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_AUTOUPDATER",
        "IS_SANDBOX",
    }
    # The shell may add its own bookkeeping (PWD, SHLVL, _) when it execs a script; the two
    # markers that find every process of the run (reaping/owner.py) hold no secret.
    markers = {TOKEN_VAR, OWNER_VAR}
    allowed = {*ENV_ALLOWLIST, *NETWORK_ENV}  # NETWORK_ENV: proxies and CAs, no secrets
    unexpected = set(env) - allowed - cli_variables - markers - {"PWD", "SHLVL", "_"}
    assert not unexpected
    assert "parent-secret-value" not in json.dumps(env)
    # The scripted server's dummy key, never the parent's real one.
    assert env["ANTHROPIC_API_KEY"] != "sk-ant-parent-key-123"
    assert env["HOME"] != os.environ["HOME"]


HANGS = """\
    #!/bin/sh
    # An agent that forks a child and a grandchild, then hangs.
    (sleep 300; echo {marker}) &
    sh -c 'sleep 300; echo {marker}' &
    sleep 300
"""


def _processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(proc.name))
    return found


def test_a_hanging_agent_is_killed_with_its_whole_process_group(tmp_path: Path) -> None:
    marker = f"evals-hang-{os.getpid()}-{tmp_path.name}"
    fake = tmp_path / "hanging-agent"
    fake.write_text(textwrap.dedent(HANGS).format(marker=marker))
    fake.chmod(0o755)
    case = make_case(tmp_path, "codex", SCRIPTS / "hello.json", executable=str(fake))
    case = case.model_copy(update={"timeout_seconds": 1.0})
    run, session = run_and_enrich(tmp_path, case)
    assert run.timed_out and run.exit_code is None
    assert run.error is not None and "timed out after 1 s" in message_of(run.error)
    assert run.error.kind == "timeout"
    assert session.status == "timed_out"
    assert _processes_with(marker) == []


def test_a_missing_cli_is_a_clear_run_error(tmp_path: Path) -> None:
    case = make_case(
        tmp_path, "pi-agent", SCRIPTS / "hello.json", executable=str(tmp_path / "no-such-pi")
    )
    run, session = run_and_enrich(tmp_path, case)
    assert (
        run.error is not None
        and "no-such-pi" in message_of(run.error)
        and "executable" in message_of(run.error)
    )
    assert run.error.kind == "crashed"
    assert session.status == "agent_error"
    assert not (tmp_path / "run" / "home").exists()


def test_the_config_home_is_removed_after_the_run(tmp_path: Path) -> None:
    require_agent("claude-code")
    run, _ = run_and_enrich(tmp_path, make_case(tmp_path, "claude-code", SCRIPTS / "hello.json"))
    assert run.error is None
    assert not (tmp_path / "run" / "home").exists()
    # ... while the CLI's own transcript is kept with the run.
    assert Path(run.side_files["transcript"]).is_file()
    shutil.rmtree(tmp_path / "run")


@pytest.mark.parametrize("kind", ["codex", "pi-agent"])
def test_system_prompt_goes_before_the_prompt(tmp_path: Path, kind: str) -> None:
    # AgentV's codex and pi providers put `system_prompt` ahead of the prompt, a blank line apart.
    require_agent(kind)
    case = make_case(tmp_path, kind, SCRIPTS / "hello.json", system_prompt="  Work quietly.  ")
    run, _ = run_and_enrich(tmp_path, case)
    assert run.error is None, run.stderr
    requests = [
        json.loads(line)
        for line in Path(run.side_files["model_server_log"]).read_text().splitlines()
    ]
    first = next(r for r in requests if r.get("event") == "request" and "hello.py" in str(r))
    assert "Work quietly.\\n\\nCreate hello.py that prints a greeting" in json.dumps(first)
