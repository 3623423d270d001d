"""An agent's identity: its CLI version probed once and recorded with every run, the auth it will
use said before any case runs, and a HOME of its own for every run, cli targets included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.adapters.auth import LOCAL_PLACEHOLDER_KEY
from evals_pipeline.adapters.identity import agent_version, clear_version_cache, target_auth
from evals_pipeline.layers import run_agents
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.targets import ClaudeCodeTarget, CodexTarget, PiAgentTarget
from evals_pipeline_tests.agent_clis import AGENT_BINARIES, require_agent

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "evals_pipeline_tests" / "fixtures" / "model-scripts"
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
PACKAGES["pi-agent"] = "@mariozechner/pi-coding-agent"


def make_case(tmp_path: Path, target: dict[str, Any], **fields: Any) -> ResolvedCase:
    return ResolvedCase.model_validate(
        {
            "suite": "s",
            "suite_path": str(tmp_path / "s.eval.yaml"),
            "case_key": fields.pop("case_key", "case-1"),
            "test_id": "case-1",
            "agent": target["name"],
            "target": target,
            "input": [{"role": "user", "content": "say hi"}],
            "prompt": "say hi",
            "base_dir": str(tmp_path),
            "timeout_seconds": 60,
            **fields,
        }
    )


def run_once(tmp_path: Path, case: ResolvedCase, name: str = "run") -> Any:
    artifacts = tmp_path / name
    return run_agent(case, RunContext(artifacts, artifacts / "workspace"))


@pytest.mark.parametrize("kind", sorted(AGENT_BINARIES))
def test_the_real_clis_report_their_pinned_version(tmp_path: Path, kind: str) -> None:
    require_agent(kind)
    pinned = json.loads((REPO / "agents" / "package.json").read_text())["dependencies"]
    version = agent_version(_target(kind), str(tmp_path))
    assert version is not None and pinned[PACKAGES[kind]] in version


def _target(kind: str) -> Any:
    models = {"claude-code": ClaudeCodeTarget, "codex": CodexTarget, "pi-agent": PiAgentTarget}
    return models[kind].model_validate({"name": kind, "provider": kind})


def test_a_scripted_cli_run_records_the_version_and_auth(tmp_path: Path) -> None:
    require_agent("claude-code")
    target = {
        "name": "claude",
        "provider": "claude-code",
        "model_server": {"script": str(SCRIPTS / "hello.json")},
    }
    run = run_once(tmp_path, make_case(tmp_path, target))
    assert run.error is None, run.stderr
    assert run.agent_version == agent_version(_target("claude-code"), str(tmp_path))
    assert run.agent_version and "Claude Code" in run.agent_version
    assert run.auth and "scripted model server" in run.auth


COUNTING_VERSION = """\
    import sys, time
    with open({log!r}, "a") as f:
        f.write("probed\\n")
    time.sleep(0.3)  # long enough for the other threads to ask meanwhile
    print("\\n  my-agent 4.2.0  \\nsecond line")
"""


def test_a_cli_version_command_runs_once_per_process_however_many_runs_ask(
    tmp_path: Path,
) -> None:
    clear_version_cache()
    log = tmp_path / "probes.log"
    probe = tmp_path / "version.py"
    probe.write_text(textwrap.dedent(COUNTING_VERSION).format(log=str(log)))
    target = {
        "name": "mine",
        "provider": "cli",
        "command": "echo answer",
        "version_command": f"{sys.executable} {probe}",
    }
    cases = [make_case(tmp_path, target, case_key=f"case-{i}") for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        versions = list(pool.map(lambda c: agent_version(c.target, c.base_dir), cases))
    assert versions == ["my-agent 4.2.0"] * 6
    runs = run_agents(cases, tmp_path / "runs", workers=3)
    assert {r.agent_version for r in runs} == {"my-agent 4.2.0"}
    assert log.read_text().count("probed") == 1
    # Without a version command a cli target has no version, and probes nothing.
    plain = make_case(tmp_path, {"name": "plain", "provider": "cli", "command": "echo hi"})
    assert run_once(tmp_path, plain, "plain").agent_version is None


def test_a_failing_version_command_records_none(tmp_path: Path) -> None:
    target = {"name": "x", "provider": "cli", "command": "echo hi", "version_command": "exit 3"}
    run = run_once(tmp_path, make_case(tmp_path, target))
    assert run.error is None and run.agent_version is None


HOME_AGENT = """\
    import json, os, sys
    home = os.environ["HOME"]
    open(os.path.join(home, "scratch"), "w").write("the agent's own")
    print(json.dumps({"home": home, "listing": sorted(os.listdir(home))}))
"""


def test_a_cli_agent_sees_a_fresh_home_of_its_own_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_home = tmp_path / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_ed25519").write_text("private")
    monkeypatch.setenv("HOME", str(user_home))
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(HOME_AGENT))
    target = {"name": "a", "provider": "cli", "command": f"{sys.executable} {agent}"}
    run = run_once(tmp_path, make_case(tmp_path, target))
    assert run.error is None, run.error
    seen = json.loads(Path(run.stdout_path).read_text())
    assert Path(seen["home"]) != user_home and seen["listing"] == ["scratch"]
    assert Path(seen["home"]).parent == tmp_path / "run"
    assert not Path(seen["home"]).exists()  # deleted after the run, never stored
    assert (user_home / ".ssh" / "id_ed25519").read_text() == "private"
    assert not (user_home / "scratch").exists()

    # `home: user` opts out: the command sees the user's HOME (read-only in the sandbox: this
    # agent writes there, so it runs on the host).
    user = {**target, "home": "user", "sandbox": False}
    shared = run_once(tmp_path, make_case(tmp_path, user), "shared")
    assert Path(json.loads(Path(shared.stdout_path).read_text())["home"]) == user_home
    (user_home / "scratch").unlink()


def test_auth_is_said_per_target_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def plan(**target: Any) -> Any:
        found = target_auth(
            ClaudeCodeTarget.model_validate({"name": "c", "provider": "claude-code", **target})
        )
        assert found is not None
        return found

    missing = plan()
    assert missing.mode is None and missing.problem
    assert "ANTHROPIC_API_KEY" in missing.problem and "auth: subscription" in missing.problem

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-env-123")
    from_env = plan()
    assert from_env.mode == "api_key" and from_env.describe() == "API key from $ANTHROPIC_API_KEY"
    assert "sk-ant" not in from_env.describe() + repr(from_env)

    gateway = plan(base_url="https://gateway.example/anthropic")
    assert gateway.describe().endswith("base URL https://gateway.example/anthropic")

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    local = plan(base_url="http://127.0.0.1:8000")
    assert local.mode == "local" and local.api_key == LOCAL_PLACEHOLDER_KEY

    no_login = plan(auth="subscription")
    assert no_login.problem and str(home / ".claude" / ".credentials.json") in no_login.problem
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    login = plan(auth="subscription", env={"ANTHROPIC_API_KEY": "sk-explicit-000000"})
    assert login.mode == "subscription" and "ANTHROPIC_API_KEY" in login.describe()

    scripted = plan(model_server={"script": "turns.yaml"})
    assert scripted.mode == "scripted" and not scripted.problem


def test_a_target_without_auth_refuses_its_cases_with_one_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    target = {"name": "codex", "provider": "codex", "executable": str(tmp_path / "never-run")}
    cases = [make_case(tmp_path, target, case_key=f"case-{i}") for i in range(5)]
    runs = run_agents(cases, tmp_path / "runs", workers=2)
    assert {message_of(r.error) for r in runs} == {target_auth(cases[0].target).problem}  # type: ignore[union-attr]
    assert all(r.exit_code is None for r in runs)
    assert not (tmp_path / "runs" / "codex").exists()  # nothing was started


ENV_DUMP = """\
    #!{python}
    import json, os, sys
    if "--version" in sys.argv:
        print("9.9.9 (fake claude)")
        sys.exit(0)
    home = os.environ["HOME"]
    with open({out!r}, "w") as f:
        json.dump({{"env": dict(os.environ), "login": os.path.isfile(home + "/.claude/.credentials.json")}}, f)
    print(json.dumps({{"type": "result", "is_error": False, "result": "done"}}))
"""


def test_subscription_auth_copies_the_login_and_strips_api_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-key-123")
    dump = tmp_path / "run" / "workspace" / "env.json"  # writable in the sandbox
    fake = tmp_path / "fake-claude"
    fake.write_text(textwrap.dedent(ENV_DUMP).format(python=sys.executable, out=str(dump)))
    fake.chmod(0o755)
    target = {
        "name": "claude",
        "provider": "claude-code",
        "auth": "subscription",
        "executable": str(fake),
        # Keys written into the target's env are removed too: the subscription pays, not a key.
        "env": {
            "ANTHROPIC_API_KEY": "sk-explicit-key-456",
            "ANTHROPIC_AUTH_TOKEN": "tok-789abc",
            "KEEP_ME": "1",
        },
    }
    run = run_once(tmp_path, make_case(tmp_path, target))
    assert run.error is None, run.error
    seen = json.loads(dump.read_text())
    assert seen["login"] is True
    assert not {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} & set(seen["env"])
    assert seen["env"]["KEEP_ME"] == "1" and seen["env"]["HOME"] != str(home)
    assert run.agent_version == "9.9.9 (fake claude)"
    assert run.auth and run.auth.startswith("subscription login")
    assert os.environ["HOME"] == str(home)


AUTH_SUITE = """\
name: auth-check
execution:
  targets: [claude, codex]
targets:
  - name: claude
    provider: claude-code
    model_server: {script: turns.yaml}
  - name: codex
    provider: codex
tests:
  - id: t1
    input: hi
    assertions: []
  - id: t2
    input: hi
    assertions: []
"""


def test_run_says_each_targets_auth_and_stops_before_any_case_without_one(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "turns.yaml").write_text("- text: hi\n")
    (project / "auth.eval.yaml").write_text(AUTH_SUITE)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env |= {
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", "auth.eval.yaml"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "auth: claude: scripted model server" in done.stdout
    assert "target 'codex' needs an API key: set OPENAI_API_KEY" in done.stderr
    assert done.stderr.count("needs an API key") == 1
    assert not (tmp_path / "storage").exists()  # no case ran, nothing was stored


def test_subscription_auth_by_oauth_token_passes_the_token_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"  # no login file: `claude setup-token`'s token instead
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-subscription")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-key-123")
    dump = tmp_path / "run" / "workspace" / "env.json"  # writable in the sandbox
    fake = tmp_path / "fake-claude"
    fake.write_text(textwrap.dedent(ENV_DUMP).format(python=sys.executable, out=str(dump)))
    fake.chmod(0o755)
    target = {
        "name": "claude",
        "provider": "claude-code",
        "auth": "subscription",
        "executable": str(fake),
        "env": {"ANTHROPIC_API_KEY": "sk-explicit-key-456"},
    }
    run = run_once(tmp_path, make_case(tmp_path, target))
    assert run.error is None, run.error
    seen = json.loads(dump.read_text())
    assert seen["login"] is False
    assert seen["env"]["CLAUDE_CODE_OAUTH_TOKEN"] == "sk-ant-oat01-subscription"
    assert "ANTHROPIC_API_KEY" not in seen["env"]
    assert run.auth and "$CLAUDE_CODE_OAUTH_TOKEN" in run.auth
