"""Hooks: AgentV's order, stdin payload and placeholders; setup failures raise, teardown warns."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.workspace import ResolvedHook, ResolvedHooks, ResolvedWorkspace
from evals_pipeline.workspaces import (
    HookContext,
    WorkspaceSetupError,
    finish_workspace,
    prepare_workspace,
)
from evals_pipeline_tests.workspaces.conftest import hook


def logging_hook(name: str, log: Path) -> ResolvedHook:
    return hook(["sh", "-c", f"echo {name} >> {log}"], log.parent)


def test_hooks_run_in_lifecycle_order(tmp_path: Path, context: HookContext) -> None:
    log = tmp_path / "log.txt"
    hooks = ResolvedHooks(
        before_all=logging_hook("before_all", log),
        before_each=logging_hook("before_each", log),
        after_each=logging_hook("after_each", log),
        after_all=logging_hook("after_all", log),
    )
    ws = tmp_path / "workspace"
    prepared = prepare_workspace(ResolvedWorkspace(hooks=hooks), ws, context, git_cache=tmp_path)
    log.write_text(log.read_text() + "agent\n")
    assert finish_workspace(prepared, context) == []
    assert log.read_text().split() == [
        "before_all",
        "before_each",
        "agent",
        "after_each",
        "after_all",
    ]
    assert [r.name for r in prepared.setup_hooks] == ["before_all", "before_each"]


def test_hook_reads_the_payload_on_stdin_and_runs_in_its_cwd(
    tmp_path: Path, context: HookContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-key")
    cwd = tmp_path / "hooks"
    cwd.mkdir()
    before = hook("cat > payload.json; env > env.txt; pwd > pwd.txt; echo saved", cwd)
    ws = tmp_path / "workspace"
    prepared = prepare_workspace(
        ResolvedWorkspace(hooks=ResolvedHooks(before_each=before)), ws, context, git_cache=tmp_path
    )
    assert json.loads((cwd / "payload.json").read_text()) == {
        "workspace_path": str(ws),
        "test_id": "case-1",
        "eval_run_id": "run-7",
        "case_input": "Fix it.",
        "case_metadata": {"level": 2},
    }
    env = (cwd / "env.txt").read_text()
    assert f"AGENTV_WORKSPACE_PATH={ws}\n" in env
    assert "secret-key" not in env  # only allowlisted variables reach a hook
    assert (cwd / "pwd.txt").read_text().strip() == str(cwd)
    assert prepared.setup_hooks[0].stdout == "saved\n"


def test_absent_payload_values_are_null(tmp_path: Path) -> None:
    before = hook("cat > payload.json", tmp_path)
    prepare_workspace(
        ResolvedWorkspace(hooks=ResolvedHooks(before_all=before)),
        tmp_path / "workspace",
        HookContext(test_id="t"),
        git_cache=tmp_path,
    )
    payload = json.loads((tmp_path / "payload.json").read_text())
    assert payload["eval_run_id"] is None
    assert payload["case_input"] is None and payload["case_metadata"] is None


def test_placeholders_fill_argv_verbatim_and_strings_quoted(tmp_path: Path) -> None:
    context = HookContext(
        test_id="t 1", eval_run_id="r", case_input="it's; rm -rf /", case_metadata={"a": [1]}
    )
    argv = hook(
        [
            "sh",
            "-c",
            'printf "%s\\n" "$@" > argv.txt',
            "sh",
            "{{workspace_path}}",
            "{{ test_id }}",
            "{{eval_run_id}}",
            "{{case_input}}",
            "{{case_metadata}}",
            "{{unknown}}",
        ],
        tmp_path,
    )
    string = hook("printf '%s\\n' {{case_input}} {{test_id}} > string.txt", tmp_path)
    ws = tmp_path / "workspace"
    prepare_workspace(
        ResolvedWorkspace(hooks=ResolvedHooks(before_all=argv, before_each=string)),
        ws,
        context,
        git_cache=tmp_path,
    )
    assert (tmp_path / "argv.txt").read_text().splitlines() == [
        str(ws),
        "t 1",
        "r",
        "it's; rm -rf /",
        '{"a": [1]}',
        "{{unknown}}",
    ]
    assert (tmp_path / "string.txt").read_text().splitlines() == ["it's; rm -rf /", "t 1"]


def test_failing_before_each_raises_with_exit_code_and_stderr(
    tmp_path: Path, context: HookContext
) -> None:
    failing = hook("echo 'database not ready' >&2; exit 3", tmp_path)
    with pytest.raises(WorkspaceSetupError) as caught:
        prepare_workspace(
            ResolvedWorkspace(hooks=ResolvedHooks(before_each=failing)),
            tmp_path / "workspace",
            context,
            git_cache=tmp_path,
        )
    message = str(caught.value)
    assert message.startswith("before_each hook `echo 'database not ready' >&2; exit 3`")
    assert "exited with code 3: database not ready" in message
    assert caught.value.hook is not None and caught.value.hook.exit_code == 3


def test_failing_before_all_stops_before_the_baseline(tmp_path: Path, context: HookContext) -> None:
    hooks = ResolvedHooks(
        before_all=hook(["false"], tmp_path), before_each=hook("touch ran", tmp_path)
    )
    with pytest.raises(WorkspaceSetupError, match="before_all hook `false` exited with code 1"):
        prepare_workspace(
            ResolvedWorkspace(hooks=hooks), tmp_path / "workspace", context, git_cache=tmp_path
        )
    assert not (tmp_path / "ran").exists()


def test_failing_teardown_hooks_are_warnings(tmp_path: Path, context: HookContext) -> None:
    hooks = ResolvedHooks(
        after_each=hook("echo cleanup failed >&2; exit 2", tmp_path),
        after_all=hook(["/no/such/program"], tmp_path),
    )
    prepared = prepare_workspace(
        ResolvedWorkspace(hooks=hooks), tmp_path / "workspace", context, git_cache=tmp_path
    )
    warnings = finish_workspace(prepared, context)
    assert len(warnings) == 2
    assert warnings[0].startswith("after_each hook")
    assert "exited with code 2: cleanup failed" in warnings[0]
    assert warnings[1].startswith("after_all hook `/no/such/program` cannot start")


def test_a_hook_that_hangs_is_killed_with_its_children(
    tmp_path: Path, context: HookContext
) -> None:
    pid_file = tmp_path / "child.pid"
    hanging = hook(f"sleep 30 & echo $! > {pid_file}; wait", tmp_path, timeout_ms=300)
    with pytest.raises(WorkspaceSetupError, match=r"before_each hook .* timed out"):
        prepare_workspace(
            ResolvedWorkspace(hooks=ResolvedHooks(before_each=hanging)),
            tmp_path / "workspace",
            context,
            git_cache=tmp_path,
        )
    assert not _alive(int(pid_file.read_text()))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X") and os.path.exists(f"/proc/{pid}")


def test_context_for_a_case(tmp_path: Path) -> None:
    case = ResolvedCase.model_validate(
        {
            "suite": "s",
            "suite_path": str(tmp_path / "s.eval.yaml"),
            "case_key": "a",
            "test_id": "A",
            "agent": "m",
            "target": {"name": "m", "provider": "mock", "response": "hi"},
            "input": [{"role": "user", "content": "Say hi."}],
            "prompt": "Say hi.",
            "metadata": {"k": 1},
            "base_dir": str(tmp_path),
        }
    )
    assert HookContext.for_case(case, "run-1") == HookContext(
        test_id="A", eval_run_id="run-1", case_input="Say hi.", case_metadata={"k": 1}
    )
