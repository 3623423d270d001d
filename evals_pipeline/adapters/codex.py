"""Codex CLI: `codex exec --json`, with CODEX_HOME and its config.toml isolated per run."""

from __future__ import annotations

import json
from pathlib import Path

from evals_pipeline.adapters.agent_cli import AgentCliAdapter, Endpoint, Launch, newest
from evals_pipeline.adapters.sandboxing import runs_sandboxed
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.targets import AgentTarget, CodexTarget

PROVIDER_ID = "evals"
KEY_VARIABLE = "EVALS_MODEL_API_KEY"
OPENAI_BASE_URL = "https://api.openai.com/v1"

# `plugins = false` alone removes codex's outbound traffic (agent-clis.md §3); the rest is
# defence in depth.
QUIET_CONFIG = """
[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false
plugin_sharing = false
"""


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def config_toml(model: str, endpoint: Endpoint | None, reasoning_effort: str | None) -> str:
    """config.toml for one run: our own provider (scripted server or API) and no extras."""
    lines = [f"model = {_toml(model)}", "check_for_update_on_startup = false"]
    if reasoning_effort:
        lines.append(f"model_reasoning_effort = {_toml(reasoning_effort)}")
    if endpoint is not None:
        base_url = endpoint.base_url or OPENAI_BASE_URL
        if endpoint.scripted:
            base_url = f"{base_url}/v1"
        lines += [
            f"model_provider = {_toml(PROVIDER_ID)}",
            "",
            f"[model_providers.{PROVIDER_ID}]",
            'name = "evals-pipeline model endpoint"',
            f"base_url = {_toml(base_url)}",
            f"env_key = {_toml(KEY_VARIABLE)}",
            'wire_api = "responses"',
        ]
        if endpoint.scripted:
            # A scripted error repeats on every retry, so retrying only wastes time.
            lines += ["request_max_retries = 0", "stream_max_retries = 0"]
    return "\n".join(lines) + "\n" + QUIET_CONFIG


class CodexAdapter(AgentCliAdapter):
    kind = "codex"
    binary = "codex"
    default_model = "gpt-5.5"
    api_key_variable = "OPENAI_API_KEY"
    credentials_file = ".codex/auth.json"

    def launch(
        self, case: ResolvedCase, target: AgentTarget, home: Path, endpoint: Endpoint, exe: str
    ) -> Launch:
        assert isinstance(target, CodexTarget)
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        uses_login = endpoint.api_key is None
        (codex_home / "config.toml").write_text(
            config_toml(
                target.model or self.default_model or "",
                None if uses_login else endpoint,
                target.reasoning_effort,
            )
        )
        extra = {"CODEX_HOME": str(codex_home)}
        if endpoint.api_key:
            extra[KEY_VARIABLE] = endpoint.api_key
        command = [
            exe,
            "exec",
            "--json",
            "--skip-git-repo-check",
            # codex's own sandbox nests a user namespace, which the OS sandbox (whose root holds
            # no capabilities) cannot grant; the OS sandbox confines it to the same folders.
            "--sandbox",
            "danger-full-access" if runs_sandboxed(target) else "workspace-write",
            "-c",
            'approval_policy="never"',
            *target.args,
            target.with_system_prompt(case.prompt),
        ]
        return Launch(command, self.base_env(target, home, extra))

    def probe_env(self, home: Path) -> dict[str, str]:
        return {"CODEX_HOME": str(home / ".codex")}

    def stream_error(self, tail: list[dict[str, object]]) -> str | None:
        message = None
        for event in tail:
            if event.get("type") == "error":
                message = str(event.get("message") or "")
            elif event.get("type") == "turn.failed":
                error = event.get("error")
                detail = error.get("message") if isinstance(error, dict) else error
                message = str(detail or message or "turn failed")
        return f"model error: {message}" if message else None

    def side_files(self, home: Path) -> dict[str, Path]:
        rollout = newest((home / ".codex" / "sessions").glob("**/rollout-*.jsonl"))
        return {"rollout": rollout} if rollout else {}
