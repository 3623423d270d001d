"""How an agent CLI target authenticates, decided before any case runs: the scripted model server,
an API key (and from where), the CLI's own subscription login, or a local model server that
needs no key. A target with none says so once, with the fix, instead of failing every case."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from evals_pipeline.models.targets import AgentTarget
from evals_pipeline.secrets import interpolated_secrets

AuthMode = Literal["scripted", "api_key", "subscription", "local"]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
LOCAL_PLACEHOLDER_KEY = "local-model-server"
"""The key sent to a local model server named by `base_url` when no key is configured: the CLIs
refuse to start without one, and a local server ignores it."""

API_KEY_NAME = re.compile(r"(API_KEY|AUTH_TOKEN)$", re.IGNORECASE)
"""Variables that carry an API key: removed from a subscription run's environment (seed 001:
`claude -p` with ANTHROPIC_API_KEY set bills the key instead of the subscription)."""


@dataclass(frozen=True)
class AuthPlan:
    """Which auth a target's runs use; `problem` (with the fix) when it has none."""

    target: str
    mode: AuthMode | None
    source: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    problem: str | None = None
    env: dict[str, str] = field(default_factory=dict, repr=False)
    """Variables the agent gets for this auth (a subscription's OAuth token)."""

    def describe(self) -> str:
        """One line for the terminal and the run records; never the key itself."""
        if self.problem:
            return f"none: {self.problem}"
        where = f", base URL {self.base_url}" if self.base_url and self.mode != "scripted" else ""
        return f"{self.source}{where}"


def is_local_url(url: str | None) -> bool:
    """Whether `url` points at this machine (a local model server: vLLM, Ollama, LM Studio)."""
    return bool(url) and (urlparse(url or "").hostname or "") in LOCAL_HOSTS


def plan_auth(
    target: AgentTarget,
    *,
    binary: str,
    key_variable: str,
    credentials: Path,
    environ: dict[str, str],
    token_variable: str = "",
) -> AuthPlan:
    """The auth of `target`'s runs: `credentials` is the CLI's login file in the user's home,
    `key_variable` the variable an API key is read from, `token_variable` one holding a
    subscription's long-lived OAuth token (claude's CLAUDE_CODE_OAUTH_TOKEN, from `claude
    setup-token`), `environ` the parent's environment."""
    name = target.name
    if target.model_server:
        return AuthPlan(name, "scripted", "scripted model server (no key needed)")
    if target.auth == "subscription":
        dropped = sorted(k for k in target.env if API_KEY_NAME.search(k))
        note = f"; removed from its env: {', '.join(dropped)}" if dropped else ""
        token = environ.get(token_variable) if token_variable else None
        if token and not credentials.is_file():
            return AuthPlan(
                name,
                "subscription",
                f"subscription token from ${token_variable} (API keys are not passed{note})",
                base_url=target.base_url,
                env={token_variable: token},
            )
        if not credentials.is_file():
            hint = f" or set {token_variable}" if token_variable else ""
            return AuthPlan(
                name,
                None,
                "",
                problem=f"target {name!r} uses auth: subscription but there is no login at "
                f"{credentials}; log in with `{binary}` first (as the user running the "
                f"pipeline){hint}, or use auth: api_key with {key_variable} set",
            )
        return AuthPlan(
            name,
            "subscription",
            f"subscription login {credentials} (copied into each run's home; API keys are "
            f"not passed{note})",
            base_url=target.base_url,
        )
    if target.api_key:
        return AuthPlan(
            name,
            "api_key",
            f"API key from {_key_origin(target.api_key)}",
            api_key=target.api_key,
            base_url=target.base_url,
        )
    key = environ.get(key_variable)
    if key:
        return AuthPlan(
            name, "api_key", f"API key from ${key_variable}", api_key=key, base_url=target.base_url
        )
    if is_local_url(target.base_url):
        return AuthPlan(
            name,
            "local",
            "local model server (no key configured: a placeholder key is sent)",
            api_key=LOCAL_PLACEHOLDER_KEY,
            base_url=target.base_url,
        )
    return AuthPlan(
        name,
        None,
        "",
        problem=f"target {name!r} needs an API key: set {key_variable}, or "
        f"`api_key: ${{{{ {key_variable} }}}}` in the target, or use `auth: subscription` "
        "(the CLI's own login), `base_url:` of a local model server, or `model_server:` "
        "(a scripted model)",
    )


def _key_origin(value: str) -> str:
    """Where a target's `api_key:` came from: the variable it interpolated, when known."""
    names = [n for n, v in interpolated_secrets().items() if v == value]
    return f"`api_key: ${{{{ {names[0]} }}}}`" if names else "the target's `api_key:`"


def subscription_env(target: AgentTarget, env: dict[str, str]) -> dict[str, str]:
    """A subscription run's environment: every API-key variable removed, wherever it came from."""
    if target.auth != "subscription" or target.model_server:
        return env
    return {k: v for k, v in env.items() if not API_KEY_NAME.search(k)}
