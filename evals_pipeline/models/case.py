"""A resolved case: the frozen spec of one test as one agent will receive it."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.conversation import Conversation
from evals_pipeline.models.messages import Message
from evals_pipeline.models.suite import TrialsSpec
from evals_pipeline.models.targets import LlmTargetSpec, TargetSpec
from evals_pipeline.models.workspace import ResolvedHooks, ResolvedWorkspace


class ResolvedCase(BaseModel):
    """Everything the adapter and the judge need for one (case, agent) partition, paths absolute."""

    model_config = ConfigDict(frozen=True)

    suite: str = Field(description="Suite slug.")
    suite_path: str
    suite_name: str = Field(
        default="",
        description="The suite's name as AgentV reports it: `name:`, else the file name without "
        "`.eval.yaml` (replay fixtures are keyed by it).",
    )
    case_key: str = Field(description="Partition key: the test id as a slug.")
    test_id: str
    agent: str = Field(description="Partition key: the target name as a slug.")
    target: TargetSpec
    input: list[Message]
    prompt: str = Field(description="The input rendered as one prompt for a command-line agent.")
    input_files: list[str] = Field(default_factory=list)
    criteria: str = ""
    expected_output: list[Message] = Field(default_factory=list)
    assertions: list[AssertionSpec] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None
    threshold: float = 0.8
    trials: TrialsSpec = Field(default_factory=TrialsSpec)
    depends_on: list[str] = Field(
        default_factory=list, description="Test ids whose runs come first (same agent)."
    )
    on_dependency_failure: Literal["skip", "fail", "run"] = "skip"
    budget_usd: float | None = Field(
        default=None, description="The suite's spend cap over all its agent runs."
    )
    fail_on_error: bool = Field(
        default=False, description="The suite stops starting runs after an execution error."
    )
    cache: bool = Field(
        default=True,
        description="Reuse this case's stored results while nothing they depend on changed "
        "(`execution.cache: false` or `run --no-cache` turn it off).",
    )
    run_budget_usd: float | None = Field(
        default=None,
        description="The run's spend cap over every agent (`run --budget`): once spent, the cases "
        "not yet started are not run. A run option, so not part of the content hash.",
    )
    keep_workspaces: bool = Field(
        default=False,
        description="`run --keep-workspaces`: every run's workspace is kept, whatever the "
        "cleanup policy (a suite without a `workspace:` has one too). A run option, so not part "
        "of the content hash.",
    )
    agentv_scoring: bool = Field(
        default=False,
        description="`run --agentv-scoring`: a grader that could not judge (crashed, timed out, "
        "printed garbage) scores 0 and is averaged in, as AgentV scores it, instead of making the "
        "case an error; it stays flagged with its error. Part of the grade's key, not the run's.",
    )
    conversation_id: str | None = None
    timeout_seconds: float = 600.0
    workspace: ResolvedWorkspace | None = Field(
        default=None, description="How each run's workspace is built; None: an empty folder."
    )
    fallbacks: list[TargetSpec] = Field(
        default_factory=list,
        description="The target's fallback_targets: run in order in the same workspace when the "
        "target's own run fails.",
    )
    target_hooks: ResolvedHooks | None = Field(
        default=None,
        description="Hooks of the suite's execution.targets entry for this agent, run inside the "
        "workspace's (AgentV §7.1).",
    )
    base_dir: str = Field(description="The eval file's folder: relative paths resolve from here.")
    grader_target: str | None = Field(
        default=None,
        description="The LLM target (a key of llm_targets) for llm-graders that name none and "
        "for the implicit grader of a test without assertions.",
    )
    llm_targets: dict[str, LlmTargetSpec] = Field(
        default_factory=dict, description="The LLM targets this case's graders use, by name."
    )
    conversation: Conversation | None = Field(
        default=None,
        description="`mode: conversation`: the turns sent one by one; `assertions` then grade "
        "the whole transcript.",
    )

    cannot_run: str | None = Field(
        default=None,
        description="Why the case would certainly fail (a code grader or the agent's command "
        "cannot start), found when the suite loaded: its run is this error at once, the agent "
        "never started. A fact of the machine, not of the spec: not part of the content hash.",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_workspace_template(cls, data: Any) -> Any:
        # Cases stored (and built) before `workspace` existed carry only `workspace_template`.
        if isinstance(data, dict) and "workspace_template" in data:
            data = dict(data)
            template = data.pop("workspace_template")
            if template is not None and data.get("workspace") is None:
                data["workspace"] = {"template": template}
        return data

    @property
    def workspace_template(self) -> str | None:
        """The absolute template folder, if the workspace has one."""
        return self.workspace.template if self.workspace else None

    def content_json(self) -> str:
        """The spec as its content hash covers it: every field but where the suite file lies and
        the run's own options."""
        return self.model_dump_json(
            exclude={
                "suite_path",
                "run_budget_usd",
                "keep_workspaces",
                "agentv_scoring",
                "cannot_run",
            }
        )

    @property
    def content_hash(self) -> str:
        """A stable hash of the spec: a changed test or target gets a new hash (and a new run)."""
        return content_digest(self.content_json())


def content_digest(content_json: str) -> str:
    """The content hash of a case whose `content_json()` is `content_json`."""
    return hashlib.sha256(content_json.encode()).hexdigest()[:16]
