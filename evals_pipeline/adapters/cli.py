"""The `cli` provider: any command, with AgentV's placeholders and output-file contract."""

from __future__ import annotations

import shlex
import shutil
import signal
from collections.abc import Iterable, Mapping
from pathlib import Path

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.adapters.sandboxing import run_sandbox
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import ErrorKind, RecordError, agent_error
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import CliTarget
from evals_pipeline.process import ProcessResult, child_env, killed_or_exited, run_process
from evals_pipeline.scratch import remove_scratch

ERROR_TAIL_CHARS = 2_000


def fill_placeholders(command: str, values: Mapping[str, str]) -> str:
    """Replace each `{NAME}` of `values` in `command`; other braces are left as written."""
    for name, value in values.items():
        command = command.replace("{" + name + "}", value)
    return command


def input_file_list(paths: Iterable[str], files_format: str) -> str:
    """The `{FILES}` value (AgentV's formatFileList): each distinct path once, in order, through
    `files_format` with `{path}` and `{basename}` shell-quoted, joined by spaces."""
    return " ".join(
        files_format.replace("{path}", shlex.quote(p)).replace(
            "{basename}", shlex.quote(Path(p).name)
        )
        for p in dict.fromkeys(paths)
    )


def render_command(case: ResolvedCase, target: CliTarget, ctx: RunContext) -> str:
    """Fill the command's placeholders, each value shell-quoted as AgentV does."""
    values = {
        "PROMPT": shlex.quote(case.prompt),
        "PROMPT_FILE": shlex.quote(str(ctx.prompt_path)),
        "OUTPUT_FILE": shlex.quote(str(ctx.output_path)),
        "EVAL_ID": shlex.quote(case.test_id),
        "ATTEMPT": str(ctx.trial),
        "FILES": input_file_list(case.input_files, target.files_format),
        "EVAL_FILE": shlex.quote(case.suite_path),
        "EVAL_DIR": shlex.quote(case.base_dir),
        "WORKSPACE": shlex.quote(str(ctx.workspace)),
    }
    return fill_placeholders(target.command, values)


def working_directory(case: ResolvedCase, target: CliTarget, ctx: RunContext) -> Path:
    """AgentV's rule (providers/cli.ts: `request.cwd ?? config.cwd`): the workspace when the
    suite configures one, even over the target's cwd; else the target's cwd; else the eval
    file's folder, so relative paths in commands resolve as they do under `agentv eval`."""
    if case.workspace is not None:
        return ctx.workspace
    if target.cwd:
        return Path(target.cwd)
    return Path(case.base_dir)


def check_health(target: CliTarget, base_dir: str) -> str | None:
    """Run the target's healthcheck once; the reason it failed, or None when healthy or unset."""
    check = target.healthcheck
    if check is None:
        return None
    result = run_process(
        check.command,
        cwd=check.cwd or target.cwd or base_dir,
        env=child_env(target.env),
        timeout_seconds=check.timeout_seconds,
    )
    if result.error or result.timed_out or result.exit_code != 0:
        detail = result.error or result.stderr.strip() or result.stdout.decode(errors="replace")
        return f"healthcheck of target {target.name!r} failed: {detail[-ERROR_TAIL_CHARS:]}"
    return None


def process_failure(
    result: ProcessResult, stdout_path: Path, timeout_seconds: float
) -> RecordError | None:
    """Why a command failed, typed: timeout, crashed (never started, or killed by a signal),
    exit_code (non-zero, with its stderr); None when it exited 0."""
    if result.timed_out:
        return agent_error("timeout", f"timed out after {timeout_seconds:g} s", result.stderr)
    if result.error is not None:
        return agent_error("crashed", result.error, result.stderr)
    if result.exit_code == 0:
        return None
    stdout = stdout_path.read_text(errors="replace") if stdout_path.is_file() else ""
    detail = (result.stderr.strip() or stdout.strip())[-ERROR_TAIL_CHARS:]
    how = killed_or_exited(result.exit_code, shell=True)  # cli commands run through sh
    kind: ErrorKind = "crashed" if _killed(result.exit_code) else "exit_code"
    return agent_error(kind, f"{how}: {detail}" if detail else how, result.stderr)


def _killed(code: int | None) -> bool:
    """Whether a command run through sh ended by a signal: a negative code (sh itself killed)
    or 128 + n (its command killed by signal n), as killed_or_exited names them."""
    return code is not None and (code < 0 or 128 < code < 128 + signal.NSIG)


def missing_output(target: CliTarget, ctx: RunContext, stderr: str = "") -> RecordError | None:
    """The error when a command that exited 0 left no {OUTPUT_FILE}, or None when its stdout
    is the answer. A command that names {OUTPUT_FILE} must write it (AgentV reads only that
    file); one that does not name it answers on stdout (an evals-pipeline convenience)."""
    if "{OUTPUT_FILE}" in target.command:
        missing = f"Failed to read output file '{ctx.output_path}': the command did not write it"
        return agent_error("parse", missing, stderr)
    if ctx.stdout_path.stat().st_size == 0:
        empty = "exited 0 but wrote nothing on stdout (and its command has no {OUTPUT_FILE})"
        return agent_error("parse", empty, stderr)
    return None


def run_home(target: CliTarget, artifacts: Path) -> dict[str, str]:
    """`{"HOME": ...}`: a fresh, empty folder in the run's artifacts, so the command reads none
    of the user's dotfiles, logins or agent settings; `{}` with `home: user`."""
    if target.home == "user":
        return {}
    home = artifacts / "home"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    return {"HOME": str(home)}


def home_path(home: dict[str, str]) -> Path | None:
    """The run's own HOME folder, writable in the sandbox; None for `home: user` (read-only)."""
    return Path(home["HOME"]) if "HOME" in home else None


def remove_home(home: dict[str, str]) -> None:
    """Delete a run's own HOME: caches and whatever the command left there are not kept."""
    if "HOME" in home:
        remove_scratch(home["HOME"])


class CliAdapter:
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        target = case.target
        assert isinstance(target, CliTarget)
        ctx.prompt_path.write_text(case.prompt)
        home = run_home(target, ctx.artifacts)
        env = child_env(
            {
                **home,
                **target.env,
                "AGENTV_WORKSPACE_PATH": str(ctx.workspace),
                "EVAL_ID": case.test_id,
            }
        )
        try:
            cwd = working_directory(case, target, ctx)
            own_folder = cwd if case.workspace is None else None
            result = run_process(
                render_command(case, target, ctx),
                cwd=cwd,
                env=env,
                timeout_seconds=case.timeout_seconds,
                stdout_path=ctx.stdout_path,
                sandbox=run_sandbox(target, case, ctx, home_path(home), runs_in=own_folder),
            )
        finally:
            remove_home(home)
        error = process_failure(result, ctx.stdout_path, case.timeout_seconds)
        if error is None and not ctx.output_path.exists():
            error = missing_output(target, ctx, result.stderr)
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            stdout_path=str(ctx.stdout_path),
            output_file_path=str(ctx.output_path) if ctx.output_path.exists() else None,
            stderr=result.stderr,
            exit_code=result.exit_code,
            start_ms=result.start_ms,
            end_ms=result.end_ms,
            timed_out=result.timed_out,
            error=error,
            workspace_path=str(ctx.workspace),
        )
