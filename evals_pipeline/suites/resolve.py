"""Resolving a loaded suite into cases: one frozen spec per (test, agent), paths absolute."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from evals_pipeline.models.assertions import (
    PROMPT_FILE_PREFIX,
    AssertionSpec,
    CodeGraderAssertion,
    CompositeAssertion,
    LlmAggregator,
    LlmGraderAssertion,
    LlmGraderBase,
    merge_preprocessors,
    walk_assertions,
)
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.conversation import Conversation, ConversationTurn
from evals_pipeline.models.suite import TestSpec, WorkspaceSpec
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.models.workspace import ResolvedRepo, ResolvedWorkspace, is_remote
from evals_pipeline.suites.aliases import rewrite_suite_aliases
from evals_pipeline.suites.consistency import grader_problems, grader_target_of
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.hooks import resolve_hooks
from evals_pipeline.suites.loader import LoadedSuite
from evals_pipeline.suites.messages import MessageBuilder
from evals_pipeline.suites.paths import absolute, resolve_preprocessor
from evals_pipeline.suites.prompt import render_prompt
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.yaml_positions import read_yaml_file

DEFAULT_TIMEOUT_SECONDS = 600.0


def resolve_cases(loaded: LoadedSuite, *, agents: list[str] | None = None) -> list[ResolvedCase]:
    """One ResolvedCase per (test, agent) pair the suite runs, in suite order.

    A test with its own `execution.target` runs only on that target; `agents` (agent slugs or
    target names) keeps only those agents and must name agents the suite has. Each case gets
    its grader target and the LLM targets its graders use; a test without assertions gets the
    implicit llm-grader over its criteria when a grader target resolves.
    """
    _check_graders(loaded)
    wanted = _wanted_agents(loaded, agents)
    suite = loaded.suite
    base = loaded.base_dir
    builder = MessageBuilder(base, str(loaded.path))
    suite_messages = builder.expand(suite.input, "user")
    cases: list[ResolvedCase] = []
    for test in suite.tests:
        test_agents = [a for a in _agents_of(test, loaded) if wanted is None or a in wanted]
        if not test_agents:
            continue
        files = test.input_files or suite.input_files
        messages = suite_messages + builder.with_files(test.input, files)
        workspace = _workspace(
            test.workspace if test.workspace is not None else suite.workspace, base
        )
        test_threshold = test.execution.threshold if test.execution else None
        for agent in test_agents:
            target = loaded.targets[agent]
            grader_target = grader_target_of(target, suite, loaded.judges)
            assertions = _assertions(loaded, test)
            conversation = _conversation(test, builder, base, grader_target, loaded.judges)
            if (
                not assertions
                and conversation is None
                and grader_target in loaded.judges
                and (test.criteria or test.expected_output)
            ):
                implicit = LlmGraderAssertion(type="llm-grader")  # AgentV's implicit grader
                assertions = [_with_preprocessors(implicit, loaded)]
            turn_graders = (
                [a for t in conversation.turns for a in t.assertions] if conversation else []
            )
            graders = [*assertions, *turn_graders]
            cases.append(
                ResolvedCase(
                    suite=loaded.slug,
                    suite_path=str(loaded.path),
                    suite_name=_agentv_suite_name(loaded),
                    case_key=slugify(test.id),
                    test_id=test.id,
                    agent=agent,
                    target=target,
                    input=messages,
                    prompt=render_prompt(messages),
                    input_files=[str(builder.find_file(value)) for value in files],
                    criteria=test.criteria,
                    expected_output=builder.expand(test.expected_output, "assistant"),
                    assertions=assertions,
                    metadata=test.metadata,
                    threshold=(
                        test_threshold if test_threshold is not None else suite.execution.threshold
                    ),
                    trials=suite.execution.trials,
                    timeout_seconds=(
                        target.timeout_seconds
                        or suite.execution.timeout_seconds
                        or DEFAULT_TIMEOUT_SECONDS
                    ),
                    workspace=workspace,
                    target_hooks=loaded.target_hooks.get(agent),
                    fallbacks=loaded.fallbacks.get(agent, []),
                    base_dir=str(base),
                    grader_target=grader_target,
                    llm_targets=_llm_targets(graders, grader_target, loaded.judges),
                    conversation=conversation,
                )
            )
    return cases


def _agentv_suite_name(loaded: LoadedSuite) -> str:
    """AgentV's suite name: `name:`, else the file name less `.eval.yaml` / `.yaml`."""
    if loaded.suite.name and loaded.suite.name.strip():
        return loaded.suite.name.strip()
    name = re.sub(r"\.ya?ml$", "", re.sub(r"\.eval\.ya?ml$", "", loaded.path.name, flags=re.I))
    return name or "eval"


def _conversation(
    test: TestSpec,
    builder: MessageBuilder,
    base_dir: Path,
    grader_target: str | None,
    judges: Mapping[str, LlmTargetSpec],
) -> Conversation | None:
    """A conversation test's turns, resolved; None for a single-turn test.

    A turn with an expected output and no assertions is judged by the implicit llm-grader, as
    a test is (AgentV's default grader), when a grader target resolves.
    """
    if test.mode != "conversation" or not test.turns:
        return None
    turns: list[ConversationTurn] = []
    for turn in test.turns:
        expected = builder.expand(turn.expected_output, "assistant")
        graders = [_with_absolute_cwd(a, base_dir) for a in turn.assertions]
        if not graders and expected and grader_target in judges:
            graders = [LlmGraderAssertion(type="llm-grader")]
        text = (
            turn.input
            if isinstance(turn.input, str)
            # AgentV sends a structured turn input as JSON.stringify would write it.
            else json.dumps(turn.input, ensure_ascii=False, separators=(",", ":"))
        )
        turns.append(ConversationTurn(input=text, expected_output=expected, assertions=graders))
    return Conversation(
        turns=turns,
        aggregation=test.aggregation or "mean",
        on_turn_failure=test.on_turn_failure or "continue",
        window_size=test.window_size,
    )


def _check_graders(loaded: LoadedSuite) -> None:
    """Raise the LLM-grader problems (load_suite reports them too, when it checks graders)."""
    problems = grader_problems(
        loaded.suite, loaded.base_dir, loaded.targets, loaded.default_agents, loaded.judges
    )
    if not problems:
        return
    doc = read_yaml_file(loaded.path)
    rewrite_suite_aliases(doc)  # so positions follow renamed keys, as when the suite loaded
    raise SuiteError([problem.at(doc) for problem in problems])


def _llm_targets(
    assertions: list[AssertionSpec],
    grader_target: str | None,
    judges: Mapping[str, LlmTargetSpec],
) -> dict[str, LlmTargetSpec]:
    """The LLM targets the case's graders call, by client key (`name@model` for an override).

    A code grader with the target proxy may ask any LLM target, so it brings all of them.
    """
    needed: dict[str, LlmTargetSpec] = {}
    every = [assertion for _, assertion in walk_assertions(assertions)]
    for assertion in every:
        if isinstance(assertion, CodeGraderAssertion) and assertion.proxy_max_calls:
            needed.update(judges)
    for assertion in every:
        if isinstance(assertion, CompositeAssertion) and isinstance(
            assertion.aggregator, LlmAggregator
        ):
            aggregator = assertion.aggregator
            assertion = LlmGraderAssertion(
                type="llm-grader", target=aggregator.target, model=aggregator.model
            )
        if not isinstance(assertion, LlmGraderBase):
            continue
        name = assertion.target or grader_target
        key = assertion.client_key(grader_target)
        if name is None or key is None or name not in judges:
            continue
        spec = judges[name]
        if assertion.model:
            spec = spec.model_copy(update={"model": assertion.model, "name": key})
        needed[key] = spec
    return needed


def _workspace(spec: WorkspaceSpec | None, base_dir: Path) -> ResolvedWorkspace | None:
    """The workspace spec with absolute paths and each hook's default timeout and cwd."""
    if spec is None:
        return None
    return ResolvedWorkspace(
        template=str(absolute(spec.template, base_dir)) if spec.template else None,
        repos=[
            ResolvedRepo(
                path=repo.path,
                source=repo.repo if is_remote(repo.repo) else str(absolute(repo.repo, base_dir)),
                commit=repo.checkout,
            )
            for repo in spec.repos
        ],
        hooks=resolve_hooks(spec.hooks, base_dir),
        cleanup=spec.cleanup,
    )


def _agents_of(test: TestSpec, loaded: LoadedSuite) -> list[str]:
    if test.execution and test.execution.target:
        name = test.execution.target
        return [loaded.agent_of.get(name) or slugify(name)]
    return loaded.default_agents


def _wanted_agents(loaded: LoadedSuite, agents: list[str] | None) -> set[str] | None:
    if agents is None:
        return None
    wanted: set[str] = set()
    for name in agents:
        try:
            slug = loaded.agent_of.get(name) or slugify(name)
        except ValueError:
            slug = name
        if slug not in loaded.targets:
            raise SuiteError(
                [
                    SuiteIssue(
                        str(loaded.path),
                        1,
                        1,
                        f"the suite has no agent '{name}'",
                        f"choose from: {', '.join(loaded.targets)}",
                    )
                ]
            )
        wanted.add(slug)
    return wanted


def _assertions(loaded: LoadedSuite, test: TestSpec) -> list[AssertionSpec]:
    """The test's own assertions, then the suite's unless either says `skip_defaults`."""
    suite = loaded.suite
    skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
    combined = [*test.assertions, *([] if skip else suite.assertions)]
    return [_with_preprocessors(_with_absolute_cwd(a, loaded.base_dir), loaded) for a in combined]


def _with_preprocessors(assertion: AssertionSpec, loaded: LoadedSuite) -> AssertionSpec:
    # AgentV gives the suite's preprocessors to every top-level LLM grader (composite members
    # keep only their own); each command's script is made absolute.
    if not isinstance(assertion, LlmGraderBase):
        return assertion
    merged = merge_preprocessors(loaded.suite.preprocessors, assertion.preprocessors)
    resolved = [resolve_preprocessor(p, loaded.base_dir) for p in merged]
    return assertion.model_copy(update={"preprocessors": resolved})


def _with_absolute_cwd(assertion: AssertionSpec, base_dir: Path) -> AssertionSpec:
    # A code grader runs from the eval file's folder unless it says otherwise (AgentV's rule),
    # and a prompt file is relative to it; made absolute here so the case is self-contained
    # wherever it runs.
    if isinstance(assertion, CompositeAssertion):
        members = [_with_absolute_cwd(member, base_dir) for member in assertion.assertions]
        return assertion.model_copy(update={"assertions": members})
    if isinstance(assertion, LlmGraderBase) and assertion.prompt_file is not None:
        path = absolute(assertion.prompt_file, base_dir)
        return assertion.model_copy(update={"prompt": f"{PROMPT_FILE_PREFIX}{path}"})
    if not isinstance(assertion, CodeGraderAssertion):
        return assertion
    cwd = absolute(assertion.cwd, base_dir) if assertion.cwd else base_dir
    return assertion.model_copy(update={"cwd": str(cwd)})
