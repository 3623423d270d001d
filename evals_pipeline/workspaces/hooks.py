"""Workspace hooks: commands run around each agent run, with AgentV's payload on stdin.

stdin is `{workspace_path, test_id, eval_run_id, case_input, case_metadata}` (absent values are
null). The same values fill `{{name}}` placeholders in the command: verbatim in an argv list,
shell-quoted in a string command (which runs through `sh -c`).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.workspace import ResolvedHook
from evals_pipeline.process import child_env, run_process

STDERR_TAIL_CHARS = 2_000
_PLACEHOLDER = re.compile(
    r"\{\{\s*(workspace_path|test_id|eval_run_id|case_input|case_metadata)\s*\}\}"
)


class HookContext(BaseModel):
    """What a hook is told about the run it belongs to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: str
    eval_run_id: str | None = None
    case_input: str | None = None
    case_metadata: dict[str, Any] | None = None

    @classmethod
    def for_case(cls, case: ResolvedCase, eval_run_id: str | None = None) -> HookContext:
        """The context of a run of `case`: its test id, its input as one prompt, its metadata."""
        return cls(
            test_id=case.test_id,
            eval_run_id=eval_run_id,
            case_input=case.prompt,
            case_metadata=case.metadata,
        )


@dataclass(frozen=True)
class HookResult:
    """How one hook ended: its output is kept (AgentV saves it), failures are described."""

    name: str
    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.error is None

    def describe(self) -> str:
        """One line (plus a stderr tail) saying how the hook failed."""
        if self.error is not None:
            outcome = self.error
        elif self.timed_out:
            outcome = f"timed out after {self.duration_ms} ms and was killed"
        else:
            outcome = f"exited with code {self.exit_code}"
        tail = self.stderr.strip()[-STDERR_TAIL_CHARS:]
        return f"{self.name} hook `{self.command}` {outcome}" + (f": {tail}" if tail else "")


def hook_payload(workspace: Path, context: HookContext) -> dict[str, Any]:
    """The JSON object a hook reads on stdin."""
    return {
        "workspace_path": str(workspace),
        "test_id": context.test_id,
        "eval_run_id": context.eval_run_id,
        "case_input": context.case_input,
        "case_metadata": context.case_metadata,
    }


def run_hook(name: str, hook: ResolvedHook, workspace: Path, context: HookContext) -> HookResult:
    """Run one hook to completion (its process group is killed at the timeout)."""
    if hook.command is None:
        raise ValueError(f"the {name} hook has no command (only a reset)")
    payload = hook_payload(workspace, context)
    values = {
        key: value if isinstance(value, str) else "" if value is None else json.dumps(value)
        for key, value in payload.items()
    }
    if isinstance(hook.command, str):
        command: str | list[str] = _fill(hook.command, values, quote=True)
        shown = hook.command
    else:
        command = [_fill(arg, values, quote=False) for arg in hook.command]
        shown = shlex.join(hook.command)
    result = run_process(
        command,
        cwd=hook.cwd,
        env=child_env({"AGENTV_WORKSPACE_PATH": str(workspace)}),
        timeout_seconds=hook.timeout_ms / 1000,
        stdin=json.dumps(payload, indent=2).encode(),
    )
    return HookResult(
        name=name,
        command=shown,
        exit_code=result.exit_code,
        stdout=result.stdout.decode("utf-8", "replace"),
        stderr=result.stderr,
        duration_ms=result.duration_ms,
        timed_out=result.timed_out,
        error=result.error,
    )


def _fill(text: str, values: dict[str, str], *, quote: bool) -> str:
    def value(match: re.Match[str]) -> str:
        found = values[match.group(1)]
        return shlex.quote(found) if quote else found

    return _PLACEHOLDER.sub(value, text)
