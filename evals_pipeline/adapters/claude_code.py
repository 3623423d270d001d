"""Claude Code: `claude -p --output-format stream-json --verbose`, with HOME isolated per run."""

from __future__ import annotations

import os
from pathlib import Path

from evals_pipeline.adapters.agent_cli import AgentCliAdapter, Endpoint, Launch, newest
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.targets import AgentTarget, ClaudeCodeTarget

QUIET_ENV = {
    # Alone sufficient for zero outbound traffic besides the model API (agent-clis.md §3).
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
}


class ClaudeCodeAdapter(AgentCliAdapter):
    kind = "claude-code"
    binary = "claude"
    default_model = "claude-sonnet-4-5"
    api_key_variable = "ANTHROPIC_API_KEY"
    credentials_file = ".claude/.credentials.json"
    token_variable = "CLAUDE_CODE_OAUTH_TOKEN"

    def launch(
        self, case: ResolvedCase, target: AgentTarget, home: Path, endpoint: Endpoint, exe: str
    ) -> Launch:
        assert isinstance(target, ClaudeCodeTarget)
        extra = dict(QUIET_ENV)
        if os.geteuid() == 0:
            # --dangerously-skip-permissions refuses to run as root unless told it is sandboxed.
            extra["IS_SANDBOX"] = "1"
        if endpoint.base_url:
            extra["ANTHROPIC_BASE_URL"] = endpoint.base_url
        if endpoint.api_key:
            extra["ANTHROPIC_API_KEY"] = endpoint.api_key
        command = [
            exe,
            "-p",
            case.prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            *(["--dangerously-skip-permissions"] if target.bypass_permissions else []),
            "--model",
            target.model or self.default_model or "",
        ]
        if target.max_turns:
            command += ["--max-turns", str(target.max_turns)]
        command += target.args
        return Launch(command, self.base_env(target, home, extra))

    def probe_env(self, home: Path) -> dict[str, str]:
        return dict(QUIET_ENV)

    def stream_error(self, tail: list[dict[str, object]]) -> str | None:
        # Classify by result.is_error and api_error_status, never by subtype (agent-clis.md §4.6).
        for event in reversed(tail):
            if event.get("type") == "result":
                if not event.get("is_error"):
                    return None
                status = event.get("api_error_status")
                reason = str(event.get("result") or event.get("subtype") or "error")
                return f"model error (HTTP {status}): {reason}" if status else reason
        return None

    def side_files(self, home: Path) -> dict[str, Path]:
        transcript = newest((home / ".claude" / "projects").glob("*/*.jsonl"))
        return {"transcript": transcript} if transcript else {}
