"""What the three agent CLIs share: an isolated config home, an allowlisted environment, the
scripted model server when the target names one, a process-group timeout, and scrubbed output.

Each CLI module (claude_code, codex, pi_agent) says only what differs: its binary, its config
files, its command line, its auth variable and where it reports a model error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.adapters.auth import (
    LOCAL_PLACEHOLDER_KEY,
    AuthPlan,
    plan_auth,
    subscription_env,
)
from evals_pipeline.adapters.base import RunContext
from evals_pipeline.adapters.sandboxing import run_sandbox
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.model_server import ModelServer, ScriptError, load_script
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import ErrorKind, RecordError, stderr_tail
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import AgentTarget
from evals_pipeline.process import ProcessSpawner, child_env, now_ms, run_process
from evals_pipeline.secrets import Redactor, run_redactor
from evals_pipeline.settings import Settings

ERROR_TAIL_CHARS = 2_000
STREAM_TAIL_LINES = 50
SCRIPTED_API_KEY = "scripted-model-server"
"""The key agents send to the scripted model server, which ignores it."""

AGENTS_DIR_ENV = "EVALS_PIPELINE_AGENTS_DIR"
"""Where `make agents` installed the pinned CLIs (a folder holding node_modules/.bin)."""

PROJECT_AGENTS_DIR = Path(__file__).resolve().parents[2] / "agents"


class AgentSetupError(EvalsPipelineError):
    """The run cannot start: no executable, no API key, no login. Recorded as the run's error."""


@dataclass
class Launch:
    """Everything a CLI module decides for one run."""

    command: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class Endpoint:
    """The model API a run talks to: the scripted server, a configured URL, or the CLI's default."""

    base_url: str | None
    api_key: str | None
    scripted: bool = False
    auth_env: tuple[tuple[str, str], ...] = ()
    """Variables of the auth itself (a subscription's OAuth token), set after API keys are
    stripped."""


def installed_executable(binary: str, settings: Settings | None = None) -> str | None:
    """The pinned install of `binary` ($EVALS_PIPELINE_AGENTS_DIR of `settings`, default: this
    process's; then ./agents), else PATH."""
    agents_dir = (settings or Settings.current()).agents_dir
    folders = [Path(agents_dir)] if agents_dir else []
    folders.append(PROJECT_AGENTS_DIR)
    for folder in folders:
        candidate = folder / "node_modules" / ".bin" / binary
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(binary)


def find_executable(target: AgentTarget, binary: str) -> str:
    """The target's `executable`, else the pinned install (`make agents`), else PATH."""
    if target.executable:
        found = shutil.which(target.executable)
        if found:
            return found
        raise AgentSetupError(
            f"executable {target.executable!r} of target {target.name!r} not found or not "
            "executable; correct `executable:` or remove it to use the pinned install"
        )
    found = installed_executable(binary)
    if found:
        return found
    raise AgentSetupError(
        f"{binary!r} not found (target {target.name!r}): run `make agents` to install the "
        f"pinned agent CLIs, set {AGENTS_DIR_ENV}, or set `executable:` in the target"
    )


def stream_tail(path: Path) -> list[dict[str, object]]:
    """The last JSON objects of a JSONL stream, newest last; unparsable lines are skipped."""
    if not path.is_file():
        return []
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 256_000))
        lines = handle.read().decode("utf-8", "replace").splitlines()[-STREAM_TAIL_LINES:]
    objects = []
    for line in lines:
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(line)
            if isinstance(value, dict):
                objects.append(value)
    return objects


class AgentCliAdapter:
    """Base adapter for an agent CLI; subclasses fill in the CLI-specific parts."""

    kind: str = ""
    binary: str = ""
    default_model: str | None = None
    api_key_variable: str = ""
    credentials_file: str = ""
    """The CLI's login file, relative to the user's home; copied for `auth: subscription`."""
    token_variable: str = ""
    """A variable holding a subscription's OAuth token, used when there is no login file."""

    def __init__(self, spawner: ProcessSpawner = run_process) -> None:
        self.spawner = spawner

    # The CLI-specific parts.
    def launch(
        self, case: ResolvedCase, target: AgentTarget, home: Path, endpoint: Endpoint, exe: str
    ) -> Launch:
        raise NotImplementedError

    def stream_error(self, tail: list[dict[str, object]]) -> str | None:
        """A model or API error the stream reports; exit codes alone do not say (pi exits 0)."""
        raise NotImplementedError

    def side_files(self, home: Path) -> dict[str, Path]:
        """Files the CLI wrote in its home worth keeping: rollouts, session files, transcripts."""
        return {}

    def key_variable(self, target: AgentTarget) -> str:
        """The variable holding the API key when `auth: api_key` and no `api_key:` is set."""
        return self.api_key_variable

    def subscription_home(self) -> Path:
        """Where the CLI's own login lives in the user's home, for `auth: subscription`."""
        return Path(os.environ.get("HOME") or Path.home())

    def probe_env(self, home: Path) -> dict[str, str]:
        """The CLI's variables for `--version` in a throwaway `home`: no traffic, no state."""
        return {}

    def auth(self, target: AgentTarget) -> AuthPlan:
        """Which auth `target`'s runs use, or the problem (with its fix) when none is there."""
        return plan_auth(
            target,
            binary=self.binary,
            key_variable=self.key_variable(target),
            credentials=self.subscription_home() / self.credentials_file,
            environ=dict(os.environ),
            token_variable=self.token_variable,
        )

    # The shared run.
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        target = case.target
        assert isinstance(target, AgentTarget)
        start = now_ms()
        home = ctx.artifacts / "home"
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        try:
            with self._endpoint(case, target, ctx) as endpoint:
                exe = find_executable(target, self.binary)
                if not endpoint.auth_env:
                    self._copy_login(target, home)
                launch = self.launch(case, target, home, endpoint, exe)
                launch.env.update(endpoint.auth_env)
                ctx.prompt_path.write_text(case.prompt)
                result = self.spawner(
                    launch.command,
                    cwd=ctx.workspace,
                    env=launch.env,
                    timeout_seconds=case.timeout_seconds,
                    stdout_path=ctx.stdout_path,
                    sandbox=run_sandbox(target, case, ctx, home),
                )
        except AgentSetupError as exc:
            shutil.rmtree(home, ignore_errors=True)
            return self._record(case, ctx, start=start, end=now_ms(), error=str(exc))
        # The scripted server's dummy key is no secret; a real one is, wherever it came from.
        dummy = endpoint.scripted or endpoint.api_key == LOCAL_PLACEHOLDER_KEY
        run_key = None if dummy else endpoint.api_key
        redactor = run_redactor(extra=[run_key, target.api_key])
        kept = self._keep_side_files(home, ctx.artifacts, redactor)
        # The home holds copied logins and caches: never stored.
        shutil.rmtree(home, ignore_errors=True)
        redactor.file(ctx.stdout_path)
        redactor.file(ctx.artifacts / "model_server.jsonl")
        error = result.error
        kind: ErrorKind = "crashed"  # a process that never started, or died without a code
        if result.timed_out:
            error = f"timed out after {case.timeout_seconds:g} s; the process group was killed"
            kind = "timeout"
        elif error is None:
            error, kind = self.stream_error(stream_tail(ctx.stdout_path)), "provider"  # the model's
            if error is None and result.exit_code != 0:
                detail = result.stderr.strip()[-ERROR_TAIL_CHARS:]
                error = f"{self.binary} exited with code {result.exit_code}: {detail}"
                kind = "exit_code"
        if ctx.stdout_path.exists() and ctx.stdout_path.stat().st_size == 0 and error is None:
            error = f"{self.binary} exited 0 but printed no events: {result.stderr.strip()}"
            kind = "parse"
        stderr = redactor.text(result.stderr)
        return self._record(
            case,
            ctx,
            start=result.start_ms,
            end=result.end_ms,
            error=RecordError(
                stage="agent",
                kind=kind,
                message=redactor.text(error),
                stderr_tail=stderr_tail(stderr),
            )
            if error
            else None,
            stderr=stderr,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            side_files=kept,
        )

    def _record(
        self,
        case: ResolvedCase,
        ctx: RunContext,
        *,
        start: int,
        end: int,
        error: RecordError | str | None,
        stderr: str = "",
        exit_code: int | None = None,
        timed_out: bool = False,
        side_files: dict[str, str] | None = None,
    ) -> AgentRun:
        target = case.target
        assert isinstance(target, AgentTarget)
        log = ctx.artifacts / "model_server.jsonl"
        files = dict(side_files or {})
        if log.is_file():
            files["model_server_log"] = str(log)
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            stdout_path=str(ctx.stdout_path) if ctx.stdout_path.exists() else None,
            stderr=stderr,
            exit_code=exit_code,
            start_ms=start,
            end_ms=end,
            timed_out=timed_out,
            error=error,
            workspace_path=str(ctx.workspace),
            stream_kind=self.kind,
            side_files=files,
            model=target.model or self.default_model,
            pricing=target.pricing,
        )

    @contextlib.contextmanager
    def _endpoint(
        self, case: ResolvedCase, target: AgentTarget, ctx: RunContext
    ) -> Iterator[Endpoint]:
        if target.model_server:
            path = Path(target.model_server.script.replace("{EVAL_ID}", case.test_id))
            if not path.is_file():
                raise AgentSetupError(
                    f"no model server script for test {case.test_id!r}: {path} does not exist"
                )
            try:
                script = load_script(path)
            except ScriptError as exc:
                raise AgentSetupError(str(exc)) from exc
            log = ctx.artifacts / "model_server.jsonl"
            with ModelServer(script, log_path=log) as server:
                yield Endpoint(server.base_url, SCRIPTED_API_KEY, scripted=True)
            return
        plan = self.auth(target)
        if plan.problem:
            raise AgentSetupError(plan.problem)
        yield Endpoint(plan.base_url, plan.api_key, auth_env=tuple(plan.env.items()))

    def _copy_login(self, target: AgentTarget, home: Path) -> None:
        if target.model_server or target.auth != "subscription":
            return
        source = self.subscription_home() / self.credentials_file
        if not source.is_file():
            raise AgentSetupError(
                f"target {target.name!r} uses auth: subscription but there is no login at "
                f"{source}; log in with `{self.binary}` first, or use auth: api_key"
            )
        destination = home / self.credentials_file
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)

    def _keep_side_files(self, home: Path, artifacts: Path, redactor: Redactor) -> dict[str, str]:
        kept: dict[str, str] = {}
        for role, source in self.side_files(home).items():
            destination = artifacts / f"{role}.jsonl"
            shutil.copyfile(source, destination)
            redactor.file(destination)
            kept[role] = str(destination)
        return kept

    def base_env(self, target: AgentTarget, home: Path, extra: dict[str, str]) -> dict[str, str]:
        """The allowlisted environment with a fresh HOME, the CLI's variables and the target's."""
        return subscription_env(target, child_env({"HOME": str(home), **extra, **target.env}))


def newest(paths: Iterator[Path]) -> Path | None:
    """The most recently modified of `paths`, or None."""
    found = [p for p in paths if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None
