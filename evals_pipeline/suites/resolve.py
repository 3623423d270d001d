"""Resolving a loaded suite into cases: one frozen spec per (test, agent), paths absolute."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from evals_pipeline.gc_pause import gc_paused
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
from evals_pipeline.models.messages import Message, input_file_paths
from evals_pipeline.models.suite import (
    EvalSuite,
    ExecutionSpec,
    HooksSpec,
    InputSpec,
    TestExecutionSpec,
    TestSpec,
    WorkspaceEnvSpec,
    WorkspaceSpec,
)
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.models.workspace import ResolvedRepo, ResolvedWorkspace
from evals_pipeline.suites.consistency import grader_target_of
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.file_boundary import file_boundary
from evals_pipeline.suites.hooks import resolve_hooks
from evals_pipeline.suites.loader import LoadedSuite
from evals_pipeline.suites.messages import MessageBuilder
from evals_pipeline.suites.paths import (
    absolute,
    find_in_search_dirs,
    find_input_file,
    find_repo_source,
    resolve_preprocessor,
)
from evals_pipeline.suites.probes import resolved, working_folder
from evals_pipeline.suites.prompt import render_prompt
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.targets import test_agents
from evals_pipeline.suites.template_vars import fill

DEFAULT_TIMEOUT_SECONDS = 600.0
DEFAULT_THRESHOLD = 0.8
"""A test's pass threshold unless it sets `execution.threshold` (AgentV's DEFAULT_THRESHOLD)."""


def resolve_cases(
    loaded: LoadedSuite, *, agents: list[str] | None = None, targets: list[str] | None = None
) -> list[ResolvedCase]:
    """One ResolvedCase per (test, agent) pair the suite runs, in suite order.

    A test runs on the run's targets as AgentV picks them (targets.test_agents). `targets`
    (`run --target`, AgentV's cliTargets: target names or agent slugs) are the run's targets
    instead of the suite's; `agents` keeps only the cases of those agents. Both must name agents
    the suite has. Each case gets its grader target and the LLM targets its graders use; a test
    without assertions gets the implicit llm-grader over its criteria when a grader target
    resolves.
    """
    with gc_paused(kept=True):
        return _resolve_cases(loaded, agents, targets)


def resolved_case_keys(loaded: LoadedSuite) -> list[str]:
    """The case keys of resolve_cases(loaded), each once in suite order, without resolving the
    cases (registering a suite's partitions needs no more: 1-2 s for 10,000 tests). Raises what
    resolve_cases raises for the suite as a whole."""
    _check_resolvable(loaded)
    keys = (slugify(test.id) for test in loaded.suite.tests if test_agents(test, loaded.agent_of))
    return list(dict.fromkeys(keys))


def _resolve_cases(
    loaded: LoadedSuite, agents: list[str] | None, targets: list[str] | None
) -> list[ResolvedCase]:
    _check_resolvable(loaded)
    run_targets = _named_agents(loaded, targets) if targets is not None else loaded.agent_of
    wanted = None if agents is None else set(_named_agents(loaded, agents).values())
    suite = loaded.suite
    base = loaded.base_dir
    boundary = None if suite.allow_outside_files else file_boundary(base)
    builder = MessageBuilder(base, boundary, str(loaded.path))
    suite_metadata = _suite_metadata(suite)
    preflight = _preflight(suite)
    cases: list[ResolvedCase] = []
    for test in suite.tests:
        agents_of_test = [
            a for a in test_agents(test, run_targets) if wanted is None or a in wanted
        ]
        if not agents_of_test:
            continue
        # skip_defaults also drops the suite's input and input files (AgentV's rule), and a
        # test's vars fill the suite's input as well as its own.
        skip = test.execution is not None and test.execution.skip_defaults
        suite_input = None if skip else _filled(suite.input, test.vars, _INPUT)
        files = test.input_files or ([] if skip else _filled(suite.input_files, test.vars, _FILES))
        messages = builder.expand(suite_input, "user") + builder.with_files(test.input, files)
        workspace = _workspace(_merged_workspace(suite.workspace, test.workspace), base, preflight)
        cases += [
            _resolved_case(loaded, test, agent, builder, messages, workspace, suite_metadata)
            for agent in agents_of_test
        ]
    return cases


def _resolved_case(
    loaded: LoadedSuite,
    test: TestSpec,
    agent: str,
    builder: MessageBuilder,
    messages: list[Message],
    workspace: ResolvedWorkspace | None,
    suite_metadata: dict[str, Any] | None,
) -> ResolvedCase:
    """One test on one agent: its graders and judge, limits and workspace, all resolved."""
    suite = loaded.suite
    base = loaded.base_dir
    target = loaded.targets[agent]
    grader_target = grader_target_of(target, suite, loaded.judges)
    assertions, conversation = _case_graders(loaded, test, builder, grader_target)
    turn_graders = [a for t in conversation.turns for a in t.assertions] if conversation else []
    graders = [*assertions, *turn_graders]
    test_threshold = test.execution.threshold if test.execution else None
    return ResolvedCase(
        suite=loaded.slug,
        suite_path=str(loaded.path),
        suite_name=_agentv_suite_name(loaded),
        case_key=slugify(test.id),
        test_id=test.id,
        agent=agent,
        target=target,
        input=messages,
        prompt=render_prompt(messages),
        input_files=input_file_paths(messages) + loaded.attached_files.get(test.id, []),
        criteria=test.criteria,
        expected_output=builder.expand(test.expected_output, "assistant"),
        assertions=assertions,
        metadata=_merged_metadata(test.metadata, suite_metadata),
        threshold=(
            # AgentV 4.42.4: the suite's execution.threshold gates the run (its exit
            # code), not a test's status; a test's own threshold does.
            test_threshold if test_threshold is not None else DEFAULT_THRESHOLD
        ),
        trials=suite.execution.trials,
        depends_on=test.depends_on or [],
        on_dependency_failure=test.on_dependency_failure or "skip",
        budget_usd=suite.execution.budget_usd,
        fail_on_error=suite.execution.fail_on_error,
        cache=_reuses_results(test.execution, suite.execution),
        conversation_id=test.conversation_id,
        timeout_seconds=(
            target.timeout_seconds or suite.execution.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
        ),
        workspace=workspace,
        target_hooks=loaded.target_hooks.get(agent),
        fallbacks=loaded.fallbacks.get(agent, []),
        base_dir=str(base),
        grader_target=grader_target,
        llm_targets=_llm_targets(graders, grader_target, loaded.judges),
        conversation=conversation,
        cannot_run=loaded.unstartable.get(agent) or loaded.ungradable.get(test.id),
    )


def _case_graders(
    loaded: LoadedSuite, test: TestSpec, builder: MessageBuilder, grader_target: str | None
) -> tuple[list[AssertionSpec], Conversation | None]:
    """The test's assertions and its conversation; with neither, AgentV's implicit llm-grader
    when there is a judge and something to judge against."""
    assertions = _assertions(loaded, test)
    conversation = _conversation(test, builder, loaded.base_dir, grader_target, loaded.judges)
    if (
        not assertions
        and conversation is None
        and grader_target in loaded.judges
        and (test.criteria or test.expected_output)
    ):
        implicit = LlmGraderAssertion(type="llm-grader")  # AgentV's implicit grader
        assertions = [_with_preprocessors(implicit, loaded)]
    return assertions, conversation


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


def _check_resolvable(loaded: LoadedSuite) -> None:
    """Raise why the suite's targets do not resolve (a grader that cannot run makes only its
    tests errors: LoadedSuite.ungradable)."""
    if loaded.run_issues:
        raise SuiteError(loaded.run_issues)


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


_INPUT: TypeAdapter[InputSpec | None] = TypeAdapter(InputSpec | None)
_FILES: TypeAdapter[list[str]] = TypeAdapter(list[str])


def _filled(value: Any, values: dict[str, Any] | None, adapter: TypeAdapter[Any]) -> Any:
    """A suite-level value with a test's vars filled in (validated again: types may change)."""
    if not values or not value:
        return value
    return adapter.validate_python(fill(adapter.dump_python(value), values))


def _suite_metadata(suite: EvalSuite) -> dict[str, Any] | None:
    """What every test's metadata inherits: `metadata:`, with a top-level `governance:` winning
    over `metadata.governance` (AgentV's extractSuiteMetadataPayload)."""
    payload = dict(suite.metadata or {})
    if suite.governance is not None:
        payload["governance"] = suite.governance
    return payload or None


def _merged_metadata(
    own: dict[str, Any] | None, inherited: dict[str, Any] | None
) -> dict[str, Any] | None:
    """AgentV's merge: lists join (suite first, no repeats), mappings merge, the test's scalars
    win, the suite fills what the test lacks."""
    if not inherited:
        return own
    merged = dict(own or {})
    for key, value in inherited.items():
        mine = merged.get(key)
        if isinstance(value, list) and isinstance(mine, list):
            seen: set[str] = set()
            joined = []
            for item in [*value, *mine]:
                mark = item if isinstance(item, str) else json.dumps(item, sort_keys=False)
                if mark not in seen:
                    seen.add(mark)
                    joined.append(item)
            merged[key] = joined
        elif isinstance(value, dict) and isinstance(mine, dict):
            merged[key] = _merged_metadata(mine, value)
        elif key not in merged:
            merged[key] = value
    return merged


def _merged_workspace(
    suite: WorkspaceSpec | None, test: WorkspaceSpec | None
) -> WorkspaceSpec | None:
    """A test's workspace over the suite's, field by field; hooks merge hook by hook, each
    hook's keys over the suite hook's (AgentV's mergeWorkspaceConfigs)."""
    if suite is None or test is None:
        return test or suite
    fields = {name for name in WorkspaceSpec.model_fields if getattr(test, name) is not None}
    merged = suite.model_copy(update={name: getattr(test, name) for name in fields - {"hooks"}})
    if test.hooks is not None:
        base = suite.hooks or HooksSpec()
        hooks: dict[str, Any] = {"enabled": test.hooks.enabled}
        for name in ("before_all", "before_each", "after_each", "after_all"):
            mine, theirs = getattr(test.hooks, name), getattr(base, name)
            if mine is not None and theirs is not None:
                mine = theirs.model_copy(update=mine.model_dump(exclude_unset=True))
            hooks[name] = mine if mine is not None else theirs
        merged = merged.model_copy(update={"hooks": HooksSpec(**hooks)})
    return merged


def _preflight(suite: EvalSuite) -> WorkspaceEnvSpec | None:
    """The `workspace.env` AgentV checks: one check for the whole run, from the first test's
    workspace merged with the suite's, where a merge of two workspaces keeps no `env`
    (yaml-parser.ts mergeWorkspaceConfigs). Failing it fails every test."""
    first = suite.tests[0].workspace if suite.tests else None
    if first is not None and suite.workspace is not None:
        return None
    chosen = first or suite.workspace
    return chosen.env if chosen else None


def _workspace(
    spec: WorkspaceSpec | None, base_dir: Path, preflight: WorkspaceEnvSpec | None = None
) -> ResolvedWorkspace | None:
    """The workspace spec with absolute paths and each hook's default timeout and cwd; its
    preflight is the run's (`_preflight`), not its own `env`."""
    if spec is None:
        return None
    template = spec.template
    if spec.mode == "static" or (spec.mode is None and spec.path):
        # A static workspace's content is the starting point (AgentV resolves `path` from the
        # working folder); each run still gets its own copy, so the folder itself never changes.
        template = str(resolved(Path(spec.path))) if spec.path else template
    env = preflight
    return ResolvedWorkspace(
        template=str(absolute(template, base_dir)) if template else None,
        repos=[
            ResolvedRepo(
                path=repo.path,
                source=find_repo_source(repo.repo, base_dir),
                commit=repo.checkout,
                ancestor=repo.ancestor,
                sparse=tuple(repo.sparse or ()),
            )
            for repo in spec.repos or []
        ],
        hooks=resolve_hooks(spec.hooks, base_dir),
        cleanup=spec.cleanup or "on_success",
        required_commands=tuple(env.required_commands) if env else (),
        required_python_modules=tuple(env.required_python_modules) if env else (),
        docker_image=spec.docker.image if spec.docker else None,
    )


def _named_agents(loaded: LoadedSuite, names: list[str]) -> dict[str, str]:
    """Target names (or agent slugs) → their agents, in order; an agent slug stands for the
    names the suite gives it (a test's execution.targets names those)."""
    wanted: dict[str, str] = {}
    for name in names:
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
        written = [
            n for n, a in loaded.agent_of.items() if a == slug and name not in loaded.agent_of
        ]
        for key in written or [name]:
            wanted[key] = slug
    return wanted


def _assertions(loaded: LoadedSuite, test: TestSpec) -> list[AssertionSpec]:
    """The test's own assertions, then the suite's unless either says `skip_defaults`."""
    suite = loaded.suite
    skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
    combined = [*test.assertions, *([] if skip else suite.assertions)]
    base = loaded.base_dir  # a new Path at each access
    return [_with_preprocessors(_with_absolute_cwd(a, base), loaded) for a in combined]


def _with_preprocessors(assertion: AssertionSpec, loaded: LoadedSuite) -> AssertionSpec:
    # AgentV gives the suite's preprocessors to every top-level LLM grader (composite members
    # keep only their own); each command's script is made absolute.
    if not isinstance(assertion, LlmGraderBase):
        return assertion
    merged = merge_preprocessors(loaded.suite.preprocessors, assertion.preprocessors)
    resolved = [resolve_preprocessor(p, loaded.base_dir) for p in merged]
    return assertion.model_copy(update={"preprocessors": resolved})


def _with_absolute_cwd(assertion: AssertionSpec, base_dir: Path) -> AssertionSpec:
    # A code grader runs from the eval file's folder unless it says otherwise; its `cwd` is
    # looked for in the eval file's folder, its parents up to the repository root, the root
    # and the working folder (AgentV's search roots), and if found nowhere taken as written,
    # relative to the working folder. A prompt file is relative to the eval file's folder.
    # Made absolute here so the case is self-contained wherever it runs.
    if isinstance(assertion, CompositeAssertion):
        members = [_with_absolute_cwd(member, base_dir) for member in assertion.assertions]
        return assertion.model_copy(update={"assertions": members})
    if isinstance(assertion, LlmGraderBase) and assertion.prompt_file is not None:
        path = absolute(assertion.prompt_file, base_dir)
        return assertion.model_copy(update={"prompt": f"{PROMPT_FILE_PREFIX}{path}"})
    command = assertion.prompt_command if isinstance(assertion, LlmGraderBase) else None
    if command is not None:
        # Its script (the last item) is found like an input file; left as written if absent
        # (the loader warned; the grader fails when it runs, as in AgentV).
        script = find_input_file(command.script, base_dir)
        if script is None:
            return assertion
        argv = [*command.command[:-1], str(script)]
        return assertion.model_copy(update={"prompt": command.model_copy(update={"command": argv})})
    if not isinstance(assertion, CodeGraderAssertion):
        return assertion
    if not assertion.cwd:
        return assertion.model_copy(update={"cwd": str(base_dir)})
    found = find_in_search_dirs(assertion.cwd, base_dir, folder=True)
    cwd = found or absolute(assertion.cwd, Path(working_folder()))
    return assertion.model_copy(update={"cwd": str(cwd)})


def _reuses_results(test: TestExecutionSpec | None, suite: ExecutionSpec) -> bool:
    """`execution.cache` of the test, else of the suite; on unless one says false."""
    if test is not None and test.cache is not None:
        return test.cache
    return suite.cache is not False
