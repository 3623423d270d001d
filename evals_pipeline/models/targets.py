"""Targets: the agents a suite runs, as written in `.agentv/targets.yaml` or inline in a suite."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    workers: int | None = Field(default=None, ge=1, le=50)
    timeout_seconds: float | None = Field(default=None, gt=0)
    grader_target: str | None = Field(
        default=None,
        description="The LLM target (provider anthropic or openai) that runs this agent's "
        "`llm-grader` assertions and the implicit grader of tests without assertions.",
    )

    @model_validator(mode="before")
    @classmethod
    def _judge_target_alias(cls, data: Any) -> Any:
        # AgentV's older name for grader_target.
        if isinstance(data, dict) and "judge_target" in data and "grader_target" not in data:
            data = {**data, "grader_target": data["judge_target"]}
            del data["judge_target"]
        return data


class Healthcheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str]
    cwd: str | None = None
    timeout_seconds: float = Field(default=30, gt=0)


class CliTarget(TargetBase):
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
    provider_batching: bool = Field(
        default=False,
        description="Run the command once for all tests of the suite (per trial) instead of "
        "once per test: it reads the eval file ({EVAL_FILE}) itself and writes one JSONL record "
        "per test, keyed by `id`, to {OUTPUT_FILE}.",
    )

    @model_validator(mode="before")
    @classmethod
    def _cli_verbose_alias(cls, data: Any) -> Any:
        # AgentV's other name for verbose.
        if isinstance(data, dict) and "cli_verbose" in data and "verbose" not in data:
            data = {**data, "verbose": data["cli_verbose"]}
            del data["cli_verbose"]
        return data


class MockTarget(TargetBase):
    """A fixed response: checks suites and graders without running an agent."""

    provider: Literal["mock"]
    response: str = ""


class ReplayTarget(TargetBase):
    """Recorded sessions, one file per test id: grade existing sessions without running an agent."""

    provider: Literal["replay"]
    sessions_dir: str = Field(
        description="Folder with one `<test id>.json` (a cli output file) or `<test id>.jsonl` "
        "(one message per line) per test."
    )


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


class AgentTarget(TargetBase):
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


class ClaudeCodeTarget(AgentTarget):
    """Claude Code (`claude -p --output-format stream-json`)."""

    provider: Literal["claude-code"]
    max_turns: int | None = Field(default=None, ge=1)


class CodexTarget(AgentTarget):
    """Codex CLI (`codex exec --json`)."""

    provider: Literal["codex"]
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None


PiApi = Literal["openai-completions", "anthropic-messages", "openai-responses"]


class PiAgentTarget(AgentTarget):
    """pi (`pi --mode json -p`)."""

    provider: Literal["pi-agent"]
    api: PiApi = Field(
        default="openai-completions", description="The wire API pi speaks to the model."
    )


class LlmTarget(TargetBase):
    """A model behind an LLM API, used as a judge: `llm-grader`, dimension judges, the panel.

    Reached through the official SDK with `base_url`; `model_server:` answers from a script
    instead, so suites and tests run judges with no API key.
    """

    model: str = Field(min_length=1, description="The model id; pin a dated snapshot.")
    base_url: str | None = Field(default=None, description="Default: the provider's own API.")
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


class AnthropicTarget(LlmTarget):
    """Anthropic's Messages API (`anthropic` SDK)."""

    provider: Literal["anthropic"]


class OpenAITarget(LlmTarget):
    """OpenAI's Chat Completions or Responses API (`openai` SDK), or any compatible server."""

    provider: Literal["openai"]
    api_format: Literal["chat", "responses"] = "chat"


LlmTargetSpec = Annotated[AnthropicTarget | OpenAITarget, Field(discriminator="provider")]

TargetSpec = Annotated[
    CliTarget
    | MockTarget
    | ReplayTarget
    | ClaudeCodeTarget
    | CodexTarget
    | PiAgentTarget
    | AnthropicTarget
    | OpenAITarget,
    Field(discriminator="provider"),
]

PROVIDERS: tuple[str, ...] = (
    "cli",
    "mock",
    "replay",
    "claude-code",
    "codex",
    "pi-agent",
    "anthropic",
    "openai",
)
LLM_PROVIDERS: tuple[str, ...] = ("anthropic", "openai")

PROVIDER_ALIASES: dict[str, str] = {
    "claude": "claude-code",
    "claude-cli": "claude-code",
    "codex-cli": "codex",
    "pi": "pi-agent",
    "pi-coding-agent": "pi-agent",
    "pi-cli": "pi-agent",
}
"""AgentV's names for the agent providers, accepted as they are written there."""


def canonical_providers(data: Any) -> Any:
    """Rewrite AgentV provider aliases in a raw `targets:` list before the union is resolved."""
    if not isinstance(data, dict) or not isinstance(data.get("targets"), list):
        return data
    targets = [
        {**t, "provider": PROVIDER_ALIASES[t["provider"]]}
        if isinstance(t, dict) and t.get("provider") in PROVIDER_ALIASES
        else t
        for t in data["targets"]
    ]
    return {**data, "targets": targets}


class TargetsFile(BaseModel):
    """`.agentv/targets.yaml`."""

    model_config = ConfigDict(extra="forbid")

    targets: list[TargetSpec]

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return canonical_providers(data)
