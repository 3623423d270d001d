"""pi: `pi --mode json -p`, with PI_CODING_AGENT_DIR (models.json, settings.json) per run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals_pipeline.adapters.agent_cli import AgentCliAdapter, Endpoint, Launch, newest
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.targets import AgentTarget, PiAgentTarget, PiApi

PROVIDER_ID = "evals"
KEY_VARIABLE = "EVALS_MODEL_API_KEY"

DEFAULT_BASE_URLS: dict[PiApi, str] = {
    "openai-completions": "https://api.openai.com/v1",
    "openai-responses": "https://api.openai.com/v1",
    "anthropic-messages": "https://api.anthropic.com",
}

QUIET_ENV = {"PI_OFFLINE": "1", "PI_TELEMETRY": "0", "PI_SKIP_VERSION_CHECK": "1"}


def models_json(target: PiAgentTarget, model: str, endpoint: Endpoint) -> dict[str, Any]:
    """pi's models.json: one provider pointing at the run's endpoint, priced as the target says."""
    base_url = endpoint.base_url or DEFAULT_BASE_URLS[target.api]
    if endpoint.scripted and target.api != "anthropic-messages":
        base_url = f"{base_url}/v1"  # the Anthropic SDK appends /v1 itself; the OpenAI one not
    price = target.pricing
    cost = {
        "input": price.input if price else 0,
        "output": price.output if price else 0,
        "cacheRead": price.cached_input or 0 if price else 0,
        "cacheWrite": price.input if price else 0,
    }
    return {
        "providers": {
            PROVIDER_ID: {
                "baseUrl": base_url,
                "api": target.api,
                "apiKey": KEY_VARIABLE,
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": model,
                        "name": model,
                        "contextWindow": 200_000,
                        "maxTokens": 8_192,
                        "cost": cost,
                    }
                ],
            }
        }
    }


class PiAgentAdapter(AgentCliAdapter):
    kind = "pi-agent"
    binary = "pi"
    default_model = "local-model"
    api_key_variable = "OPENAI_API_KEY"
    credentials_file = ".pi/agent/auth.json"

    def launch(
        self, case: ResolvedCase, target: AgentTarget, home: Path, endpoint: Endpoint, exe: str
    ) -> Launch:
        assert isinstance(target, PiAgentTarget)
        agent_dir = home / ".pi" / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        model = target.model or self.default_model or ""
        settings: dict[str, Any] = {"enableInstallTelemetry": False}
        if endpoint.api_key is not None:
            (agent_dir / "models.json").write_text(
                json.dumps(models_json(target, model, endpoint), indent=2)
            )
            settings |= {"defaultProvider": PROVIDER_ID, "defaultModel": model}
        if endpoint.scripted:
            # A scripted error repeats on every retry: fail at once instead of after ~21 s.
            settings["retry"] = {"enabled": False}
        (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2))
        extra = {**QUIET_ENV, "PI_CODING_AGENT_DIR": str(agent_dir)}
        command = [exe, "--mode", "json", "-p"]
        if endpoint.api_key is not None:
            extra[KEY_VARIABLE] = endpoint.api_key
            command += ["--provider", PROVIDER_ID]
        elif target.subprovider:
            command += ["--provider", target.subprovider]  # pi's own login for that provider
        if target.tools:
            command += ["--tools", target.tools]
        if target.thinking:
            command += ["--thinking", target.thinking]
        command += ["--model", model, *target.args, target.with_system_prompt(case.prompt)]
        return Launch(command, self.base_env(target, home, extra))

    def key_variable(self, target: AgentTarget) -> str:
        assert isinstance(target, PiAgentTarget)
        return "ANTHROPIC_API_KEY" if target.api == "anthropic-messages" else "OPENAI_API_KEY"

    def probe_env(self, home: Path) -> dict[str, str]:
        return dict(QUIET_ENV)

    def stream_error(self, tail: list[dict[str, object]]) -> str | None:
        # pi exits 0 on a model error: the last assistant message's stopReason tells.
        for event in reversed(tail):
            message = event.get("message")
            if event.get("type") != "message_end" or not isinstance(message, dict):
                continue
            if message.get("role") != "assistant":
                continue
            if message.get("stopReason") in ("error", "aborted"):
                reason = message.get("errorMessage") or message.get("stopReason")
                return f"model error: {reason}"
            return None
        return None

    def side_files(self, home: Path) -> dict[str, Path]:
        session = newest((home / ".pi" / "agent" / "sessions").glob("**/*.jsonl"))
        return {"session_file": session} if session else {}
