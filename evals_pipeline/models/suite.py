"""An eval suite as authored: AgentV's v4 eval YAML (tests, execution, targets, workspace)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from evals_pipeline.models.assertions import (
    AssertionSpec,
    PreprocessorSpec,
    normalize_assertion_type,
)
from evals_pipeline.models.judging import DIMENSIONS, Dimension
from evals_pipeline.models.targets import TargetSpec, canonical_providers
from evals_pipeline.models.workspace import CleanupPolicy, workspace_relative


class ContentBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["text", "file", "image"]
    value: str


class MessageSpec(BaseModel):
    """One authored message; content is text, an object, or a list of blocks."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | dict[str, Any] | list[ContentBlock | str] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


InputSpec = str | list[MessageSpec | str] | dict[str, Any]


class TargetRef(BaseModel):
    """An `execution.targets[]` entry: a target by name, or a name for another target
    (`use_target`), with hooks run around the workspace's for this target's runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    use_target: str | None = None
    hooks: HooksSpec | None = None


TrialStrategy = Literal["pass_at_k", "mean", "confidence_interval"]


class TrialsSpec(BaseModel):
    """How many times each test runs and how the trials make one score (AgentV's rules)."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(default=1, ge=1, le=100)
    strategy: TrialStrategy = Field(
        default="pass_at_k",
        description="pass_at_k: the best trial, stopping at the first pass; mean: the mean "
        "score; confidence_interval: the lower bound of the mean's 95% t-interval.",
    )
    cost_limit_usd: float | None = Field(
        default=None,
        ge=0,
        description="Stop counting trials once their summed cost reaches this (AgentV: stop "
        "running them).",
    )


class ExecutionSpec(BaseModel):
    """Run settings of a suite (or of one test, where only some apply)."""

    model_config = ConfigDict(extra="forbid")

    target: str | None = None
    targets: list[str | TargetRef] | None = None
    workers: int = Field(default=3, ge=1, le=50)
    timeout_seconds: float | None = Field(
        default=None, gt=0, description="Agent timeout; a target's own timeout wins."
    )
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="AgentV's run gate: it does not change a test's verdict, which uses the "
        "test's own execution.threshold, else 0.8.",
    )
    skip_defaults: bool = False
    trials: TrialsSpec = Field(default_factory=TrialsSpec)
    cache: bool | None = Field(
        default=None,
        description="AgentV's response cache. Accepted; every run invokes the agent (see "
        "docs/suite-format.md).",
    )
    cache_path: str | None = Field(default=None, description="Folder of AgentV's cache.")
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        description="Spend cap: once the agent runs' summed cost reaches it, the tests not yet "
        "started are errors (budget_exceeded).",
    )
    fail_on_error: bool = Field(
        default=False,
        description="After the first execution error, the tests not yet started are errors.",
    )

    def target_names(self) -> list[str]:
        names = [t if isinstance(t, str) else t.name for t in self.targets or []]
        if self.target and self.target not in names:
            names.insert(0, self.target)
        return names


class TestExecutionSpec(BaseModel):
    """A test's own `execution:`; AgentV's schema allows every suite key, and reads `targets`,
    `threshold` and `skip_defaults` (the others, `target` among them, are accepted and have no
    effect)."""

    model_config = ConfigDict(extra="forbid")

    target: str | None = Field(
        default=None, description="Ignored with a warning, as AgentV 4.42.4 never reads it."
    )
    targets: list[str | TargetRef] | None = Field(
        default=None,
        description="With several targets in the run, runs the test only on those it names.",
    )
    threshold: float | None = Field(default=None, ge=0, le=1)
    skip_defaults: bool = False
    workers: int | None = Field(default=None, ge=1, le=50)
    cache: bool | None = None
    trials: TrialsSpec | None = None
    budget_usd: float | None = Field(default=None, ge=0)
    fail_on_error: bool | None = None
    assertions: list[AssertionSpec] | None = Field(
        default=None, description="Ignored for a test, as in AgentV: write test assertions."
    )

    def target_names(self) -> list[str]:
        """The names `targets` lists, as AgentV reads a test's (extractTargetsFromTestCase):
        strings only, trimmed, blank ones dropped; `target` is never read."""
        names = (t.strip() for t in self.targets or [] if isinstance(t, str))
        return [name for name in names if name]


class RepoSpec(BaseModel):
    """A git repository checked out into the workspace (as a detached worktree)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Folder inside the workspace, e.g. `repo`.")
    repo: str = Field(
        min_length=1,
        description="A local repository (relative to the eval file's folder) or a URL git can "
        "clone (https://…, ssh, file://…).",
    )
    commit: str | None = Field(default=None, min_length=1, description="Default: HEAD.")
    base_commit: str | None = Field(
        default=None, min_length=1, description="Alias of `commit`; if both are set they match."
    )
    ancestor: int = Field(
        default=0, ge=0, description="Check out the commit this many first parents back."
    )
    sparse: list[str] | None = Field(
        default=None, description="Cone-mode sparse checkout of these folders only."
    )

    @field_validator("path")
    @classmethod
    def _inside_workspace(cls, value: str) -> str:
        workspace_relative(value)
        return value

    @field_validator("base_commit")
    @classmethod
    def _same_as_commit(cls, value: str | None, info: ValidationInfo) -> str | None:
        commit = info.data.get("commit")
        if value is not None and commit is not None and value != commit:
            raise ValueError(
                f"'{value}' differs from commit '{commit}'; base_commit is an alias of "
                "commit: keep one of them"
            )
        return value

    @property
    def checkout(self) -> str:
        """The commit, branch or tag to check out."""
        return self.commit or self.base_commit or "HEAD"


class HookSpec(BaseModel):
    """A command run at one point of a workspace's life, with AgentV's JSON on stdin."""

    model_config = ConfigDict(extra="forbid")

    command: str | list[str] | None = Field(
        default=None,
        description="argv list, or a string run with `sh -c`. A hook with neither a command "
        "nor a reset does nothing (AgentV ignores it).",
    )
    timeout_ms: int | None = Field(
        default=None, gt=0, description="Default: 60000 for before_*, 30000 for after_*."
    )
    cwd: str | None = Field(
        default=None,
        description="Default: the workspace file's folder, else the eval file's folder.",
    )
    reset: Literal["none", "fast", "strict"] | None = Field(
        default=None,
        description="On after_each: reset the workspace's repos (or root) to their checkout "
        "before the hook runs: fast = git reset --hard + git clean -fd, strict = -fdx.",
    )

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if value is not None and (not value or (isinstance(value, str) and not value.strip())):
            raise ValueError("the hook command is empty")
        return value


class HooksSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    before_all: HookSpec | None = None
    before_each: HookSpec | None = None
    after_each: HookSpec | None = None
    after_all: HookSpec | None = None


class DockerSpec(BaseModel):
    """AgentV's container for graders. Accepted; a case that would use it is an error."""

    model_config = ConfigDict(extra="forbid")

    image: str
    timeout: int | None = Field(default=None, ge=1)
    memory: str | None = None
    cpus: float | None = Field(default=None, ge=0.1)


class WorkspaceEnvSpec(BaseModel):
    """Preflight: what must be installed before any agent runs."""

    model_config = ConfigDict(extra="forbid")

    required_commands: list[str] = Field(default_factory=list)
    required_python_modules: list[str] = Field(default_factory=list)


class WorkspaceSpec(BaseModel):
    """Each run's fresh workspace: a template copy, repositories, hooks, a cleanup policy."""

    model_config = ConfigDict(extra="forbid")

    template: str | None = Field(
        default=None, description="A folder copied into each run's fresh workspace."
    )
    repos: list[RepoSpec] | None = None
    hooks: HooksSpec | None = None
    isolation: Literal["shared", "per_test"] | None = Field(
        default=None,
        description="Accepted; every run gets its own fresh workspace (AgentV's per_test).",
    )
    mode: Literal["pooled", "temp", "static"] | None = Field(
        default=None,
        description="Accepted; static with a path uses that folder's content as the template.",
    )
    path: str | None = Field(default=None, description="The folder of mode: static.")
    docker: DockerSpec | None = None
    env: WorkspaceEnvSpec | None = None
    cleanup: CleanupPolicy | None = Field(
        default=None,
        description="When to delete a run's workspace: on_success (default: keep failed and "
        "errored runs), always, never.",
    )


class RequiresSpec(BaseModel):
    """The AgentV version a suite needs (informational here)."""

    model_config = ConfigDict(extra="forbid")

    agentv: str | None = None


class JudgingSpec(BaseModel):
    """The LLM panel that judges every trial on five dimensions and compares agents pairwise.

    Not part of AgentV's format: an evals-pipeline extension (see docs/judging.md).
    """

    model_config = ConfigDict(extra="forbid")

    panel: list[str] = Field(
        min_length=1,
        description="LLM target names (provider anthropic or openai); three or more from "
        "different model families, none from a judged agent's family.",
    )
    quorum: int = Field(default=2, ge=1, description="Valid votes a dimension needs.")
    dimensions: list[Dimension] = Field(default_factory=lambda: list(DIMENSIONS), min_length=1)
    weights: dict[Dimension, float] = Field(
        default_factory=dict,
        description="Heuristic weight w_d per dimension in [0, 1]; the panel gets 1 - w_d. "
        "Defaults: correctness 0.7, completeness 0.4, codeQuality 0.2, minimalDiff 0.6, "
        "verification 0.5.",
    )
    pairwise: bool = Field(
        default=True, description="Compare the agents of each case with position swap."
    )
    seed: int = Field(default=0, description="Draws which agent of a pair is shown first.")
    confirm_failures: bool = Field(
        default=False,
        description="Ask the panel whether each failed trial's category (from the rules) fits.",
    )
    calibration: str | None = Field(
        default=None,
        description="Human labels (CSV, JSONL or YAML: test_id, agent, dimension, "
        "human_verdict, split) for TPR/TNR and corrected rates; relative to the eval file.",
    )
    max_input_chars: int = Field(
        default=60_000, ge=2_000, description="Transcript budget per judge call."
    )

    @field_validator("weights")
    @classmethod
    def _unit_weights(cls, value: dict[Dimension, float]) -> dict[Dimension, float]:
        for dimension, weight in value.items():
            if not 0 <= weight <= 1:
                raise ValueError(f"weight of {dimension} must be in [0, 1], got {weight}")
        return value


TURN_RUBRICS = "turn-rubrics"
"""AgentV's name for the llm-grader that checks a turn's plain-string assertions."""


class TurnSpec(BaseModel):
    """One turn of a conversation test: the user's message and how the answer is graded.

    Plain strings among the assertions are criteria, checked together by one llm-grader
    `turn-rubrics` (AgentV's rule).
    """

    model_config = ConfigDict(extra="forbid")

    input: str | dict[str, Any] | list[Any]
    expected_output: InputSpec | None = None
    assertions: list[AssertionSpec] = Field(default_factory=list)

    @field_validator("assertions", mode="before")
    @classmethod
    def _criteria_as_rubrics(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        criteria = [item.strip() for item in value if isinstance(item, str) and item.strip()]
        graders = [
            {**item, "type": normalize_assertion_type(item["type"])}
            if isinstance(item, dict) and "type" in item
            else item
            for item in value
            if not isinstance(item, str)
        ]
        if criteria:
            rubrics = [
                # Not required: AgentV hands these to the grader as they are, unparsed.
                {"id": f"criterion-{index}", "outcome": text, "weight": 1, "required": False}
                for index, text in enumerate(criteria, 1)
            ]
            graders.append({"type": "llm-grader", "name": TURN_RUBRICS, "rubrics": rubrics})
        return graders


class TestSpec(BaseModel):
    """One test: what the agent is asked and how its answer is graded."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    criteria: str = ""
    input: InputSpec = ""
    input_files: list[str] = Field(default_factory=list)
    expected_output: InputSpec | None = None
    assertions: list[AssertionSpec] = Field(default_factory=list)
    execution: TestExecutionSpec | None = None
    workspace: WorkspaceSpec | None = None
    metadata: dict[str, Any] | None = None
    vars: dict[str, Any] | None = Field(
        default=None,
        description="Values for {{name}} / {{a.b}} in input, input_files, criteria and "
        "expected_output (substituted when the suite loads).",
    )
    conversation_id: str | None = Field(default=None, description="Grouping; reported as is.")
    suite: str | None = Field(default=None, description="Grouping; reported as is.")
    depends_on: list[str] | None = Field(
        default=None, description="Tests that run first; see on_dependency_failure."
    )
    on_dependency_failure: Literal["skip", "fail", "run"] | None = Field(
        default=None,
        description="When a dependency ended in an execution error: skip (default) or fail make "
        "this test an error without running it; run runs it anyway.",
    )
    mode: Literal["conversation"] | None = Field(
        default=None, description="conversation: send `turns` one by one, grading each answer."
    )
    turns: list[TurnSpec] | None = Field(default=None, min_length=1)
    aggregation: Literal["mean", "min", "max"] | None = Field(
        default=None, description="How turn (and conversation) scores make the test's: mean."
    )
    on_turn_failure: Literal["continue", "stop"] | None = Field(
        default=None, description="stop: turns after one scoring below the threshold score 0."
    )
    window_size: int | None = Field(
        default=None, ge=1, description="Turns of history sent besides system messages."
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return _rename_alias(data, "evaluators", "assertions")

    @model_validator(mode="after")
    def _conversation_fields(self) -> TestSpec:
        # AgentV's cross-field rules for conversation mode (eval-validator.ts).
        if self.mode == "conversation":
            if not self.turns:
                raise ValueError("mode: conversation requires a non-empty 'turns' list")
            if self.expected_output is not None:
                raise ValueError(
                    "top-level 'expected_output' is not allowed with mode: conversation (use "
                    "per-turn expected_output instead)"
                )
            return self
        for key in ("turns", "aggregation", "on_turn_failure", "window_size"):
            if getattr(self, key) is not None:
                raise ValueError(f"'{key}' requires mode: conversation")
        return self


class EvalSuite(BaseModel):
    """A whole eval file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str | None = Field(default=None, alias="$schema")
    name: str | None = Field(default=None, pattern=r"^[a-z0-9-]+$")
    description: str = ""
    category: str | None = None
    version: str | None = None
    author: str | None = None
    tags: list[str] = Field(default_factory=list)
    license: str | None = None
    requires: RequiresSpec | None = None
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="Inherited by every test's metadata (arrays joined, the test's scalars win).",
    )
    governance: dict[str, Any] | None = Field(
        default=None, description="AgentV's governance block: metadata.governance of each test."
    )
    tests: list[TestSpec] = Field(
        min_length=1,
        description="The tests; or a path: a .yaml / .jsonl file of tests, or a folder of "
        "<id>/case.yaml (read when the suite loads).",
    )
    execution: ExecutionSpec = Field(default_factory=ExecutionSpec)
    assertions: list[AssertionSpec] = Field(default_factory=list)
    input: InputSpec | None = None
    input_files: list[str] = Field(default_factory=list)
    workspace: WorkspaceSpec | None = None
    preprocessors: list[PreprocessorSpec] = Field(
        default_factory=list,
        description="File-to-text converters every LLM grader of the suite uses (AgentV).",
    )
    targets: list[TargetSpec] = Field(
        default_factory=list,
        description="Inline targets; otherwise the nearest .agentv/targets.yaml is used.",
    )
    judging: JudgingSpec | None = None
    public_env: list[str] = Field(
        default_factory=list,
        description="Variables whose `${{ VAR }}` values are not secret (a model name, a "
        "region): every other interpolated value is scrubbed from what the pipeline stores and "
        "prints. Ours; AgentV ignores it with a warning.",
    )
    allow_outside_files: bool = Field(
        default=False,
        description="Let input files and file blocks resolve outside the eval file's git "
        "repository (its folder when not in one); refused by default, as their contents reach "
        "the agent, the graders and the report. Not an AgentV key.",
    )

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        data = canonical_providers(_rename_alias(data, "eval_cases", "tests"))
        if isinstance(data, dict) and "target" in data and "execution" not in data:
            data = {**data, "execution": {"target": data["target"]}}
            del data["target"]
        return data


def _rename_alias(data: Any, old: str, new: str) -> Any:
    if isinstance(data, dict) and old in data and new not in data:
        data = dict(data)
        data[new] = data.pop(old)
    return data
