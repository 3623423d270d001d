"""The cli, mock and replay adapters run for real and record failures as data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.enrichers import enrich_run
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message


def make_case(tmp_path: Path, target: dict, **overrides) -> ResolvedCase:
    fields = {
        "suite": "s",
        "suite_path": str(tmp_path / "s.eval.yaml"),
        "case_key": "case-1",
        "test_id": "Case 1",
        "agent": target["name"],
        "target": target,
        "input": [Message(role="user", content="say hi")],
        "prompt": "say hi",
        "base_dir": str(tmp_path),
        "timeout_seconds": 20,
    }
    return ResolvedCase.model_validate({**fields, **overrides})


def ctx(tmp_path: Path, trial: int = 0) -> RunContext:
    artifacts = tmp_path / "runs" / f"t{trial}"
    return RunContext(artifacts, artifacts / "workspace", trial)


def test_cli_placeholders_are_filled_and_the_output_file_is_read(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os, sys\n"
        "prompt_file, out, eval_id, attempt, prompt = sys.argv[1:6]\n"
        "text = open(prompt_file).read()\n"
        "json.dump({'output': [{'role': 'assistant', 'content': f'{eval_id}|{attempt}|{prompt}|{text}|{os.getcwd()}',\n"
        "  'tool_calls': [{'tool': 'Bash', 'input': {'command': 'ls'}, 'output': 'a',\n"
        "                  'start_time': '2026-01-01T00:00:00Z', 'end_time': '2026-01-01T00:00:02Z'}]}],\n"
        "  'token_usage': {'input': 7, 'output': 3}, 'cost_usd': 0.5, 'duration_ms': 1234}, open(out, 'w'))\n"
    )
    target = {
        "name": "a",
        "provider": "cli",
        "command": f"{sys.executable} {agent} {{PROMPT_FILE}} {{OUTPUT_FILE}} {{EVAL_ID}} {{ATTEMPT}} {{PROMPT}}",
    }
    case = make_case(tmp_path, target, prompt="it's a 'quoted' prompt")
    run = run_agent(case, ctx(tmp_path, trial=2))
    assert run.error is None and run.exit_code == 0 and not run.timed_out
    session = enrich_run(run, tmp_path / "session")
    assert session.status == "ok"
    assert session.output == f"Case 1|2|it's a 'quoted' prompt|it's a 'quoted' prompt|{tmp_path}"
    assert session.token_usage is not None and session.token_usage.total == 10
    assert session.cost_usd == 0.5 and session.duration_ms == 1234
    assert session.trace_summary.tool_calls == {"Bash": 1}
    assert session.trace_summary.tool_durations == {"Bash": 2000}


def test_files_are_each_shell_quoted_once_through_files_format(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\njson.dump({'text': json.dumps(sys.argv[2:])}, open(sys.argv[1], 'w'))\n"
    )
    notes, bobs = tmp_path / "my notes.txt", tmp_path / "bob's $HOME.txt"
    files = [str(notes), str(bobs), str(notes)]
    answers = []
    for files_format in ("{path}", "--file={basename}"):
        target = {
            "name": "a",
            "provider": "cli",
            "files_format": files_format,
            "command": f"{sys.executable} {agent} {{OUTPUT_FILE}} {{FILES}} end",
        }
        case = make_case(tmp_path, target, input_files=files)
        run = run_agent(case, ctx(tmp_path, trial=len(answers)))
        assert run.error is None, run.error
        answers.append(json.loads(enrich_run(run, tmp_path / f"s{len(answers)}").output))
    # AgentV's formatFileList: distinct paths in order, {path} and {basename} shell-quoted.
    assert answers == [
        [str(notes), str(bobs), "end"],
        ["--file=my notes.txt", "--file=bob's $HOME.txt", "end"],
    ]


def test_cli_runs_in_the_workspace_copy_of_the_template(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "seed.txt").write_text("seed")
    target = {"name": "a", "provider": "cli", "command": "ls; echo changed > seed.txt"}
    case = make_case(tmp_path, target, workspace_template=str(template))
    run = run_agent(case, ctx(tmp_path))
    workspace = Path(run.workspace_path or "")
    assert (workspace / "seed.txt").read_text() == "changed\n"
    assert (template / "seed.txt").read_text() == "seed", "the template itself is never touched"
    session = enrich_run(run, tmp_path / "session")
    assert session.output == "seed.txt\n"
    assert any("stdout was taken" in w for w in session.parse_warnings)


def test_a_command_naming_output_file_must_write_it_as_in_agentv(tmp_path: Path) -> None:
    target = {"name": "a", "provider": "cli", "command": "echo on stdout only # {OUTPUT_FILE}"}
    run = run_agent(make_case(tmp_path, target), ctx(tmp_path))
    assert run.error is not None and message_of(run.error).startswith(
        "Failed to read output file '"
    )
    assert enrich_run(run, tmp_path / "session").status == "agent_error"


def test_a_command_without_output_file_that_prints_nothing_is_an_error(tmp_path: Path) -> None:
    run = run_agent(
        make_case(tmp_path, {"name": "a", "provider": "cli", "command": "true"}), ctx(tmp_path)
    )
    assert (
        message_of(run.error)
        == "exited 0 but wrote nothing on stdout (and its command has no {OUTPUT_FILE})"
    )


def test_cli_non_zero_exit_is_an_agent_error_with_stderr(tmp_path: Path) -> None:
    target = {
        "name": "a",
        "provider": "cli",
        "command": "echo partial; echo 'model overloaded' >&2; exit 7",
    }
    run = run_agent(make_case(tmp_path, target), ctx(tmp_path))
    assert run.exit_code == 7
    assert (
        run.error is not None
        and "code 7" in message_of(run.error)
        and "model overloaded" in message_of(run.error)
    )
    session = enrich_run(run, tmp_path / "session")
    assert session.status == "agent_error" and session.stderr == "model overloaded\n"
    assert session.message_count == 0 and Path(session.messages_path).exists()


def test_cli_hang_is_killed_at_the_timeout_and_recorded(tmp_path: Path) -> None:
    target = {"name": "a", "provider": "cli", "command": "sleep 60"}
    run = run_agent(make_case(tmp_path, target, timeout_seconds=1), ctx(tmp_path))
    assert run.timed_out and message_of(run.error) == "timed out after 1 s"
    assert enrich_run(run, tmp_path / "session").status == "timed_out"


def test_cli_agent_sees_no_secret_from_the_parent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    target = {"name": "a", "provider": "cli", "command": "env", "env": {"MY_SETTING": "on"}}
    run = run_agent(make_case(tmp_path, target), ctx(tmp_path))
    stdout = Path(run.stdout_path or "").read_text()
    assert "sk-ant-secret" not in stdout
    assert "MY_SETTING=on" in stdout and "AGENTV_WORKSPACE_PATH=" in stdout


def test_unparsable_output_file_becomes_the_answer_text(tmp_path: Path) -> None:
    target = {"name": "a", "provider": "cli", "command": "printf 'plain answer' > {OUTPUT_FILE}"}
    run = run_agent(make_case(tmp_path, target), ctx(tmp_path))
    assert enrich_run(run, tmp_path / "session").output == "plain answer"


def test_healthcheck_failure_stops_the_target(tmp_path: Path) -> None:
    from evals_pipeline.layers import run_agents

    target = {
        "name": "a",
        "provider": "cli",
        "command": "echo never",
        "healthcheck": {"command": "echo 'no license' >&2; exit 1"},
    }
    runs = run_agents([make_case(tmp_path, target)], tmp_path / "step", workers=1)
    assert (
        runs[0].error is not None
        and "healthcheck" in message_of(runs[0].error)
        and "no license" in message_of(runs[0].error)
    )


def test_mock_returns_its_response(tmp_path: Path) -> None:
    case = make_case(tmp_path, {"name": "m", "provider": "mock", "response": "canned"})
    session = enrich_run(run_agent(case, ctx(tmp_path)), tmp_path / "session")
    assert session.output == "canned" and session.status == "ok"


def test_replay_grades_a_recorded_session(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    lines = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "on it",
            "tool_calls": [{"tool": "Edit", "input": {"file_path": "a.py"}}],
        },
        "not json at all",
        {"role": "assistant", "content": "fixed"},
    ]
    (recorded / "Case 1.jsonl").write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    target = {"name": "r", "provider": "replay", "sessions_dir": str(recorded)}
    session = enrich_run(
        run_agent(make_case(tmp_path, target), ctx(tmp_path)), tmp_path / "session"
    )
    assert session.output == "fixed" and session.message_count == 3
    assert session.parse_warnings and "line 3" in session.parse_warnings[0]


def test_replay_without_a_recording_is_an_error(tmp_path: Path) -> None:
    target = {"name": "r", "provider": "replay", "sessions_dir": str(tmp_path)}
    run = run_agent(make_case(tmp_path, target), ctx(tmp_path))
    assert run.error is not None and "Case 1.json" in message_of(run.error)
