"""Targets: the agents a suite runs, as written in `.agentv/targets.yaml` or inline in a suite."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

SandboxNetwork = Literal["host", "loopback"]
"""host: the host's network (an agent calling its model API needs it); loopback: a network
namespace of its own with only `lo`, so nothing outside the sandbox, the host's loopback
services included, is reachable."""


class TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agentv_aliases: ClassVar[tuple[str, ...]] = ()
    """AgentV's other names for this target's provider, accepted as written there."""

    if TYPE_CHECKING:
        # Each concrete target declares it as the one Literal it is chosen by.
        provider: str

    name: str = Field(min_length=1)
    use_target: str | None = Field(
        default=None,
        description="Run this target as the named one (AgentV's delegation; chains of up to "
        "10, `${{ VAR }}` picks the target from the environment).",
    )
    workers: int | None = Field(default=None, ge=1, le=50)
    timeout_seconds: float | None = Field(default=None, gt=0)
    grader_target: str | None = Field(
        default=None,
        description="The LLM target that runs this agent's `llm-grader` assertions and the "
        "implicit grader of tests without assertions.",
    )
    fallback_targets: list[str] = Field(
        default_factory=list,
        description="Targets tried in order, in the same workspace, when this one's run fails "
        "(AgentV's rule; names that do not resolve are skipped).",
    )
    subagent_mode_allowed: bool | None = Field(
        default=None, description="AgentV's VS Code subagent switch; accepted, no effect here."
    )
    max_retries: int | None = Field(
        default=None, ge=0, le=10, description="LLM targets: HTTP retries; others: no effect."
    )
    retry_initial_delay_ms: float | None = Field(default=None, ge=0)
    retry_max_delay_ms: float | None = Field(default=None, ge=0)
    retry_backoff_factor: float | None = Field(default=None, ge=1)
    retry_status_codes: list[int] | None = Field(
        default=None,
        description="AgentV's retry tuning; accepted, the SDKs' own backoff (408, 409, 429, 5xx, "
        "honouring retry-after) is used.",
    )

    @model_validator(mode="before")
    @classmethod
    def _judge_target_alias(cls, data: Any) -> Any:
        # AgentV's older name for grader_target.
        if isinstance(data, dict) and "judge_target" in data and "grader_target" not in data:
            data = {**data, "grader_target": data["judge_target"]}
            del data["judge_target"]
        return data


class DelegateTarget(TargetBase):
    """A name for another target (`use_target:` without `provider:`), resolved at selection."""

    provider: Literal["use_target"]
    use_target: str = Field(description="The target (or `${{ VAR }}`) this name stands for.")


UNSUPPORTED_PROVIDERS: dict[str, str] = {
    "copilot": "it drives GitHub Copilot's CLI, which needs a GitHub login and has no "
    "offline model endpoint",
    "copilot-cli": "it drives GitHub Copilot's CLI, which needs a GitHub login and has no "
    "offline model endpoint",
    "copilot-sdk": "it drives GitHub Copilot's Node SDK, which needs a GitHub login",
    "copilot_sdk": "it drives GitHub Copilot's Node SDK, which needs a GitHub login",
    "copilot-log": "it reads Copilot session-state files, a format not parsed here",
    "vscode": "it drives a VS Code window (a GUI), which cannot run headless",
    "vscode-insiders": "it drives a VS Code window (a GUI), which cannot run headless",
    "claude-sdk": "it runs Claude Code through the Node Agent SDK; provider: claude-code runs "
    "the same agent through its CLI",
    "cc-mirror": "it looks up a cc-mirror variant's binary; use provider: claude-code with "
    "executable: set to that variant's claude binary",
    "agentv": "it is AgentV's built-in grader agent (a model with filesystem tools), not an "
    "agent to evaluate",
    "transcript": "it is AgentV's internal stand-in for imported transcripts; use provider: replay",
}
"""AgentV providers without an adapter here, and why; naming one as a run target is an error."""


class UnsupportedTarget(TargetBase):
    """A target whose provider evals-pipeline cannot run: kept so a suite that does not run it
    loads (AgentV ignores targets it does not run); selecting it for a run is an error."""

    model_config = ConfigDict(extra="allow")

    provider: Literal["unsupported"]
    agentv_provider: str = Field(description="The provider as written.")

    def reason(self) -> str:
        """Why this target cannot run, and what to do instead."""
        known = UNSUPPORTED_PROVIDERS.get(self.agentv_provider.strip().lower())
        if known:
            return f"provider '{self.agentv_provider}' is not supported here: {known}"
        return (
            f"provider '{self.agentv_provider}' is not a provider evals-pipeline knows (nor "
            "AgentV: it is too close to a known one to be a .agentv/providers/ script)"
        )


class Healthcheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str]
    cwd: str | None = None
    timeout_seconds: float = Field(default=30, gt=0)


class SandboxedTarget(TargetBase):
    """A target whose runs are children of the runner: agents and commands, run in the OS
    sandbox unless they opt out (docs/security.md)."""

    sandbox: bool = Field(
        default=True,
        description="Run in the OS sandbox (bubblewrap on Linux: the runner invisible, the host "
        "read-only, only the workspace, the run's folder, a private HOME and /tmp writable); "
        "false runs it on the host, as does EVALS_PIPELINE_SANDBOX=off for every target.",
    )
    sandbox_network: SandboxNetwork = Field(
        default="host",
        description="host: the sandbox shares the host's network (an agent calling a model API, "
        "or a model server on the host's 127.0.0.1, needs it); loopback: only a loopback of its "
        "own, nothing outside the sandbox reachable.",
    )


class CliTarget(SandboxedTarget):
    """Any command, AgentV's `cli` provider contract ({PROMPT}, {PROMPT_FILE}, {OUTPUT_FILE}, ...)."""

    provider: Literal["cli"]
    command: str = Field(min_length=1)
    cwd: str | None = None
    files_format: str = "{path}"
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra variables passed to the command."
    )
    healthcheck: Healthcheck | None = None
    keep_temp_files: bool = False
    verbose: bool = Field(
        default=False,
        description="AgentV prints each rendered command; accepted for compatibility (every run "
        "keeps its command's stdout and stderr in its artifacts). `cli_verbose` is read as this.",
    )
    version_command: str | None = Field(
        default=None,
        description="A command printing the agent's version (e.g. `my-agent --version`): run once "
        "per process, its first line is recorded with every result and keys the result cache.",
    )
    home: Literal["isolated", "user"] = Field(
        default="isolated",
        description="isolated: each run gets a fresh, empty HOME inside its run folder (deleted "
        "after the run); user: the command sees the user's own HOME.",
    )
    provider_batching: bool = Field(
        default=False,
        description="Run the command once for all tests of the suite (per trial) instead of "
        "once per test: it reads the eval file ({EVAL_FILE}) itself and writes one JSONL record "
        "per test, keyed by `id`, to {OUTPUT_FILE}.",
    )

    @model_validator(mode="before")
    @classmethod
    def _cli_aliases(cls, data: Any) -> Any:
        return _renamed(data, {"cli_verbose": "verbose"})


class MockTarget(TargetBase):
    """A fixed response: checks suites and graders without running an agent."""

    provider: Literal["mock"]
    response: str = ""


class ReplayTarget(TargetBase):
    """Recorded outputs graded without running an agent: our folder of sessions (one file per
    test id), AgentV's fixtures file (`agentv eval --record-replay`), or AgentV's execution
    traces (`agentv.trace.v1`, the `outputs/trace.json` of each test of an `agentv eval` run)."""

    provider: Literal["replay"]
    sessions_dir: str | None = Field(
        default=None,
        description="Folder with one `<test id>.json` (a cli output file) or `<test id>.jsonl` "
        "(one message per line, or an agent CLI's session) per test.",
    )
    fixtures: str | None = Field(
        default=None,
        description="AgentV's replay fixtures: JSONL records (`agentv.replay_fixture.v1`), "
        "relative to the eval file.",
    )
    execution_traces: str | None = Field(
        default=None,
        description="AgentV's execution traces (`agentv.trace.v1`): one JSON envelope, a JSON "
        "array of them, or JSONL, relative to the eval file.",
    )
    source_target: str | None = Field(
        default=None,
        description="With fixtures or execution_traces: the target whose recorded outputs are "
        "used.",
    )
    suite: str | None = Field(
        default=None,
        description="With fixtures or execution_traces: the recorded suite name; default: the suite's.",
    )
    eval_path: str | None = Field(
        default=None,
        description="With fixtures or execution_traces: the recorded eval path; default: the eval file.",
    )
    variant: str | None = Field(
        default=None, description="With fixtures or execution_traces: the recorded variant."
    )

    @model_validator(mode="after")
    def _one_source(self) -> ReplayTarget:
        sources = [self.sessions_dir, self.fixtures, self.execution_traces]
        if sum(source is not None for source in sources) != 1:
            raise ValueError(
                "a replay target needs exactly one source: sessions_dir (a folder of sessions), "
                "fixtures (AgentV's replay JSONL) or execution_traces (AgentV's trace files)"
            )
        if self.sessions_dir is None and not self.source_target:
            source = "fixtures" if self.fixtures is not None else "execution_traces"
            raise ValueError(f"a replay target with {source} needs source_target")
        return self


AuthMode = Literal["api_key", "subscription"]


class ModelServerSpec(BaseModel):
    """Run the agent against the scripted model server: no API key, no tokens spent."""

    model_config = ConfigDict(extra="forbid")

    script: str = Field(description="A turn script (YAML or JSON), relative to the defining file.")


class Pricing(BaseModel):
    """USD per million tokens, for agents that report tokens but no cost (codex)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class AgentTarget(SandboxedTarget):
    """A real coding-agent CLI, run in an isolated workspace with a config home of its own."""

    executable: str | None = Field(
        default=None,
        description="The CLI to run; default: the pinned install (`make agents`), then PATH.",
    )
    model: str | None = None
    base_url: str | None = Field(
        default=None, description="The model API's base URL; default: the CLI's own."
    )
    auth: AuthMode = Field(
        default="api_key",
        description="api_key: pass the key to this agent only; subscription: the CLI's own "
        "login (only its credentials file is copied into the isolated config home).",
    )
    api_key: str | None = Field(
        default=None, description="Usually ${{ ANTHROPIC_API_KEY }}; default: that variable."
    )
    model_server: ModelServerSpec | None = None
    args: list[str] = Field(default_factory=list, description="Extra command-line arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    pricing: Pricing | None = None
    cwd: str | None = Field(
        default=None,
        description="AgentV's working directory for the agent; not used here: every run gets "
        "a fresh workspace.",
    )
    system_prompt: str | None = Field(
        default=None,
        description="Text put before the prompt (codex, pi); Claude Code ignores it, as in AgentV.",
    )
    log_dir: str | None = Field(
        default=None, description="AgentV's stream log folder; here the stream is kept per run."
    )
    log_format: Literal["summary", "json"] | None = Field(
        default=None, description="AgentV's stream log format; no effect here."
    )
    stream_log: Literal["raw", "summary"] | bool | None = Field(
        default=None, description="AgentV's stream logging; no effect here."
    )

    @model_validator(mode="before")
    @classmethod
    def _agent_aliases(cls, data: Any) -> Any:
        return _renamed(data, {"binary": "executable", "log_directory": "log_dir"})

    def with_system_prompt(self, prompt: str) -> str:
        """The prompt with `system_prompt` put before it (AgentV's codex and pi providers)."""
        system = (self.system_prompt or "").strip()
        return f"{system}\n\n{prompt}" if system else prompt


class ClaudeCodeTarget(AgentTarget):
    """Claude Code (`claude -p --output-format stream-json`)."""

    provider: Literal["claude-code"]
    agentv_aliases = ("claude", "claude-cli")
    max_turns: int | None = Field(default=None, ge=1)
    max_budget_usd: float | None = Field(
        default=None, ge=0, description="Accepted as in AgentV, which passes it on to nothing."
    )
    bypass_permissions: bool = Field(
        default=True,
        description="Run with --dangerously-skip-permissions (AgentV's default); false leaves "
        "Claude Code's permission prompts on.",
    )


class CodexTarget(AgentTarget):
    """Codex CLI (`codex exec --json`)."""

    provider: Literal["codex"]
    agentv_aliases = ("codex-cli",)
    reasoning_effort: Literal["minimal", "low", "medium", "high", "xhigh"] | None = Field(
        default=None, description="codex's model_reasoning_effort (AgentV's name is accepted)."
    )

    @model_validator(mode="before")
    @classmethod
    def _effort_alias(cls, data: Any) -> Any:
        return _renamed(data, {"model_reasoning_effort": "reasoning_effort"})


PiApi = Literal["openai-completions", "anthropic-messages", "openai-responses"]


class PiAgentTarget(AgentTarget):
    """pi (`pi --mode json -p`)."""

    provider: Literal["pi-agent"]
    agentv_aliases = ("pi", "pi-coding-agent", "pi-cli")
    api: PiApi = Field(
        default="openai-completions", description="The wire API pi speaks to the model."
    )
    subprovider: str | None = Field(
        default=None,
        description="pi's --provider when no base_url, model server or key routes the run "
        "through evals-pipeline's own provider entry.",
    )
    tools: str | None = Field(default=None, description="pi's --tools (comma-separated).")
    thinking: str | None = Field(default=None, description="pi's --thinking level.")


class LlmTarget(TargetBase):
    """A model behind an LLM API, used as a judge: `llm-grader`, dimension judges, the panel.

    Reached through the official SDK with `base_url`; `model_server:` answers from a script
    instead, so suites and tests run judges with no API key.
    """

    model: str = Field(min_length=1, description="The model id; pin a dated snapshot.")
    base_url: str | None = Field(
        default=None,
        description="Default: the provider's own API. For openai, `/v1` is appended unless the "
        "URL ends with it, as AgentV does.",
    )
    api_key: str | None = Field(
        default=None,
        description="Usually ${{ ANTHROPIC_API_KEY }} / ${{ OPENAI_API_KEY }}; default: that "
        "variable.",
    )
    model_server: ModelServerSpec | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_output_tokens: int = Field(default=2048, ge=1)
    max_retries: int = Field(
        default=3, ge=0, le=10, description="Retries with backoff on 408, 409, 429 and 5xx."
    )
    max_concurrency: int = Field(
        default=4, ge=1, le=64, description="Calls in flight to this provider at once."
    )
    pricing: Pricing | None = Field(
        default=None, description="USD per million tokens, for the judges' cost."
    )

    @model_validator(mode="before")
    @classmethod
    def _model_aliases(cls, data: Any) -> Any:
        # AgentV reads the model id from model, else deployment, else variant.
        if isinstance(data, dict) and "model" not in data:
            for key in ("deployment", "variant"):
                if key in data:
                    data = {**data, "model": data[key]}
                    del data[key]
                    break
        return data


class AnthropicTarget(LlmTarget):
    """Anthropic's Messages API (`anthropic` SDK)."""

    provider: Literal["anthropic"]
    thinking_budget: int | None = Field(
        default=None, ge=1024, description="Extended thinking's token budget (AgentV's key)."
    )


class OpenAITarget(LlmTarget):
    """OpenAI's Chat Completions or Responses API (`openai` SDK), or any compatible server."""

    provider: Literal["openai"]
    api_format: Literal["chat", "responses"] = "chat"

    @model_validator(mode="before")
    @classmethod
    def _endpoint_alias(cls, data: Any) -> Any:
        return _renamed(data, {"endpoint": "base_url"})


class AzureTarget(LlmTarget):
    """Azure OpenAI through the `openai` SDK: the Responses API at `<endpoint>/openai/v1`, as
    AgentV calls it; `model` is the deployment name."""

    provider: Literal["azure"]
    agentv_aliases = ("azure-openai",)
    base_url: str | None = Field(
        default=None,
        description="The resource's URL (AgentV's endpoint, e.g. https://NAME.openai.azure.com) "
        "or just its name (AgentV's resource); `/openai/v1` is appended.",
    )
    api_version: str = Field(default="v1", description="Sent as ?api-version= (AgentV's version).")

    @model_validator(mode="before")
    @classmethod
    def _azure_aliases(cls, data: Any) -> Any:
        return _renamed(
            data, {"endpoint": "base_url", "resource": "base_url", "version": "api_version"}
        )


class GeminiTarget(LlmTarget):
    """Google Gemini through its OpenAI-compatible Chat Completions endpoint (`openai` SDK)."""

    provider: Literal["gemini"]
    agentv_aliases = ("google", "google-gemini")
    model: str = Field(default="gemini-2.5-flash", min_length=1, description="AgentV's default.")


class OpenRouterTarget(LlmTarget):
    """OpenRouter's OpenAI-compatible Chat Completions API (`openai` SDK)."""

    provider: Literal["openrouter"]


class RegisteredTargets:
    """The discriminated union (on `provider`) of the target models the agent registry
    registered, built when a value is validated rather than when a model holding it is defined:
    a model in `models/` cannot import the agents, and an agent's target model is the agent's
    own. Errors, dumps and the JSON schema are those of the pydantic union itself."""

    def __init__(self, base: type[TargetBase]) -> None:
        self.base = base

    def members(self) -> tuple[type[TargetBase], ...]:
        """The union's members now: the registered subclasses of `base`, then, for any target,
        the delegation and the unsupported stand-in."""
        if not _REGISTERED:
            raise RuntimeError(
                "no target models registered: importing evals_pipeline.agents.registry "
                "registers every agent's"
            )
        found = tuple(model for model in _REGISTERED if issubclass(model, self.base))
        return (*found, DelegateTarget, UnsupportedTarget) if self.base is TargetBase else found

    def adapter(self) -> TypeAdapter[Any]:
        members = self.members()
        cached = _ADAPTERS.get((self.base, members))
        if cached is None:
            union = Annotated[Union[members], Field(discriminator="provider")]  # type: ignore[valid-type]  # noqa: UP007
            cached = _ADAPTERS[(self.base, members)] = TypeAdapter(union)
        return cached

    def __get_pydantic_core_schema__(
        self, _source: Any, _handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # The context (where stored paths resolve) is the caller's; any model serializes as its
        # own class does (pydantic's SerializeAsAny).
        return core_schema.with_info_plain_validator_function(
            lambda value, info: self.adapter().validate_python(value, context=info.context),
            serialization=core_schema.simple_ser_schema("any"),
        )

    def __get_pydantic_json_schema__(
        self, _schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(self.adapter().core_schema)


_REGISTERED: list[type[TargetBase]] = []
_ADAPTERS: dict[tuple[type[TargetBase], tuple[type[TargetBase], ...]], TypeAdapter[Any]] = {}


def register_targets(models: tuple[type[TargetBase], ...]) -> None:
    """Make `models` (one per provider, in the order messages list them) the runnable targets
    of `TargetSpec`; the agent registry calls this when it is imported."""
    _REGISTERED[:] = models


def registered_targets() -> tuple[type[TargetBase], ...]:
    """The runnable target models, one per provider, as the agent registry registered them."""
    return tuple(_REGISTERED)


TargetSpec = Annotated[TargetBase, RegisteredTargets(TargetBase)]
"""Any target a suite can write: the registered agents' target models, a delegation, or an
unsupported provider kept aside."""

LlmTargetSpec = Annotated[LlmTarget, RegisteredTargets(LlmTarget)]
"""A target a judge can use: the registered LLM providers' target models."""


def provider_of(model: type[TargetBase]) -> str:
    """The `provider:` a target model is chosen by (its discriminator's one value)."""
    (provider,) = get_args(model.model_fields["provider"].annotation)
    return str(provider)


def provider_aliases() -> dict[str, str]:
    """AgentV's names for the registered providers (each model's `agentv_aliases`)."""
    return {
        alias: provider_of(model)
        for model in registered_targets()
        for alias in model.agentv_aliases
    }


def _renamed(data: Any, renames: dict[str, str | None]) -> Any:
    """`data` with AgentV's alternative keys renamed (None: dropped); the canonical key wins."""
    if not isinstance(data, dict) or not any(old in data for old in renames):
        return data
    data = dict(data)
    for old, new in renames.items():
        if old not in data:
            continue
        value = data.pop(old)
        if new is not None and new not in data:
            data[new] = value
    return data


def canonical_target(target: Any) -> Any:
    """One raw target with AgentV's provider spelling made canonical (case-insensitive, as
    AgentV reads it): an alias renamed, `use_target` without a provider a delegation, and a
    provider evals-pipeline cannot run kept aside as `unsupported`."""
    if not isinstance(target, dict):
        return target
    provider = target.get("provider")
    if provider is None:
        return {**target, "provider": "use_target"} if "use_target" in target else target
    if not isinstance(provider, str):
        return target
    key = provider.strip().lower()
    aliases = provider_aliases()
    providers = [provider_of(model) for model in registered_targets()]
    key = aliases.get(key, key)
    if key in providers:
        return {**target, "provider": key} if key != provider else target
    if key in ("use_target", "unsupported"):
        return target
    known = [*providers, *aliases, *UNSUPPORTED_PROVIDERS]
    # A near miss of a known provider is a typo (AgentV would look for a script of that name
    # and fail): kept aside so selecting it says "did you mean".
    if key in UNSUPPORTED_PROVIDERS or difflib.get_close_matches(key, known, n=1, cutoff=0.8):
        return {**target, "provider": "unsupported", "agentv_provider": provider}
    return discovered_provider(target, provider.strip())


def discovered_provider(target: dict[str, Any], provider: str) -> dict[str, Any]:
    """A provider AgentV does not know, as AgentV runs it: a `cli` target whose command is the
    one written, else `bun run .agentv/providers/<provider>.ts {PROMPT}`, with `cwd` and
    `timeout_seconds`; its other settings are not read (targets.ts,
    resolveDiscoveredProviderConfig). The command runs in the eval file's folder (or the
    workspace) like any cli target, so the relative script path is found from there."""
    read = {"cwd", "judge_target", *TargetBase.model_fields}
    kept = {k: v for k, v in target.items() if k in read}
    command = target.get("command") or f"bun run .agentv/providers/{provider}.ts {{PROMPT}}"
    return {**kept, "provider": "cli", "command": command}


def canonical_providers(data: Any) -> Any:
    """Rewrite AgentV provider spellings in a raw `targets:` list before the union is resolved."""
    if not isinstance(data, dict) or not isinstance(data.get("targets"), list):
        return data
    return {**data, "targets": [canonical_target(t) for t in data["targets"]]}


class TargetsFile(BaseModel):
    """`.agentv/targets.yaml`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: str | None = Field(
        default=None,
        alias="$schema",
        description="AgentV's schema tag (e.g. agentv-targets-v2.2); accepted, not checked.",
    )
    targets: list[TargetSpec]
    public_env: list[str] = Field(
        default_factory=list,
        description="Variables whose `${{ VAR }}` values in this file are not secret: every "
        "other interpolated value is scrubbed from what the pipeline stores and prints. Ours; "
        "AgentV ignores it.",
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return canonical_providers(data)
