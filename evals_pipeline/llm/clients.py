"""The live clients of a set of LLM targets, with the scripted model servers they need.

`with LlmClients(targets, log_dir=folder) as clients: clients.get("judge").complete(...)`:
targets with `model_server:` get a server of their own for the block's duration, so judges run
offline with no API key.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from evals_pipeline.llm.anthropic_api import AnthropicClient
from evals_pipeline.llm.openai_api import AzureClient, GeminiClient, OpenAIClient, OpenRouterClient
from evals_pipeline.llm.sdk import MODEL_SERVER_KEY, SdkClient
from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.model_server import ModelServer, load_script
from evals_pipeline.models.targets import AnthropicTarget, LlmTargetSpec
from evals_pipeline.served import StartStop

CLIENTS: dict[str, type[SdkClient]] = {
    "anthropic": AnthropicClient,
    "openai": OpenAIClient,
    "azure": AzureClient,
    "gemini": GeminiClient,
    "openrouter": OpenRouterClient,
}
"""The client class of each LLM provider."""


def make_client(
    target: LlmTargetSpec, *, base_url: str | None = None, api_key: str | None = None
) -> SdkClient:
    """The client for a target's provider; `base_url`/`api_key` override the target's.

    Raises LlmConfigError when no API key is found (the target's, else the environment's).
    """
    client = CLIENTS[target.provider]
    return client(target, base_url=base_url, api_key=api_key)


def model_server_url(target: LlmTargetSpec, server: ModelServer) -> str:
    """The base URL each SDK expects for a scripted server: OpenAI's includes `/v1`."""
    return server.base_url if isinstance(target, AnthropicTarget) else f"{server.base_url}/v1"


class LlmClients(StartStop):
    """Clients by target name; a context manager that runs the targets' scripted model servers.

    Clients are made on first `get`, so a target that is never asked for needs no API key.
    """

    def __init__(
        self, targets: Mapping[str, LlmTargetSpec], *, log_dir: Path | None = None
    ) -> None:
        """`log_dir` receives `<name>.model_server.jsonl` per scripted target."""
        self._targets = dict(targets)
        self._log_dir = log_dir
        self._servers: dict[str, ModelServer] = {}
        self._clients: dict[str, SdkClient] = {}
        self._lock = threading.Lock()
        self._entered = False

    @property
    def names(self) -> list[str]:
        """The target names, in the order given."""
        return list(self._targets)

    def server(self, name: str) -> ModelServer | None:
        """The scripted model server answering for `name` (while entered), else None."""
        return self._servers.get(name)

    def start(self) -> LlmClients:
        """Start a model server per scripted target (all scripts are loaded first); returns self.

        Raises ScriptError for a script that cannot be used.
        """
        if self._entered:
            raise RuntimeError("these LLM clients are already started")
        with self._lock:
            self._clients.clear()  # made for servers that are gone
        scripts = {
            name: load_script(target.model_server.script)
            for name, target in self._targets.items()
            if target.model_server is not None
        }
        try:
            for name, script in scripts.items():
                # Judges declare no tools; answer them from the script, not with "OK".
                judge_script = script.model_copy(update={"side_requests": False})
                log_path = self._log_dir / f"{name}.model_server.jsonl" if self._log_dir else None
                self._servers[name] = ModelServer(judge_script, log_path=log_path).start()
        except BaseException:
            self.stop()
            raise
        self._entered = True
        return self

    def stop(self) -> None:
        """Stop the model servers; safe to call twice."""
        servers, self._servers = self._servers, {}
        for server in servers.values():
            server.stop()
        self._entered = False  # the clients stay, so `usage()` still answers after the block

    def get(self, name: str) -> SdkClient:
        """The client of target `name`; KeyError listing the known names for an unknown one.

        Raises LlmConfigError for a target without an API key.
        """
        target = self._targets.get(name)
        if target is None:
            known = ", ".join(sorted(self._targets)) or "none"
            raise KeyError(f"no LLM target named {name!r}; known: {known}")
        if not self._entered:
            raise RuntimeError("LLM clients are used inside `with LlmClients(...)` only")
        with self._lock:
            client = self._clients.get(name)
            if client is None:
                client = self._clients[name] = self._make(name, target)
            return client

    def usage(self) -> dict[str, LlmUsage]:
        """Calls, tokens and cost so far, per target that was asked for."""
        with self._lock:
            return {name: client.usage for name, client in self._clients.items()}

    def _make(self, name: str, target: LlmTargetSpec) -> SdkClient:
        server = self._servers.get(name)
        if server is None:
            return make_client(target)
        return make_client(
            target, base_url=model_server_url(target, server), api_key=MODEL_SERVER_KEY
        )
