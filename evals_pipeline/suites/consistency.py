"""Checks across a suite's parts: unique test keys, dependencies that exist and form no cycle,
well-formed tool calls, gradable tests, and LLM graders that can reach a model."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evals_pipeline.models.assertions import (
    AssertionSpec,
    CodeGraderAssertion,
    CompositeAssertion,
    LlmAggregator,
    LlmGraderBase,
    walk_assertions,
)
from evals_pipeline.models.messages import ToolCall
from evals_pipeline.models.suite import EvalSuite, MessageSpec, TestSpec
from evals_pipeline.models.targets import LlmTarget, LlmTargetSpec, TargetSpec
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.paths import absolute, find_input_file
from evals_pipeline.suites.probes import is_file
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.targets import test_agents
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument


def duplicate_test_ids(doc: YamlDocument) -> list[SuiteIssue]:
    """Tests whose ids give the same partition key (`My Test` and `my-test` collide).

    Runs on the raw data, so it is reported together with any validation errors.
    """
    issues: list[SuiteIssue] = []
    tests = doc.data.get("tests") if isinstance(doc.data, dict) else None
    if not isinstance(tests, list):
        return issues
    seen: dict[str, tuple[str, int]] = {}  # partition key -> first test id, its index
    for index, test in enumerate(tests):
        test_id = test.get("id") if isinstance(test, dict) else None
        if not isinstance(test_id, str) or not test_id:
            continue  # validation reports a missing or non-text id
        try:
            key = slugify(test_id)
        except ValueError:
            mark = doc.positions.value(("tests", index, "id"))
            issues.append(
                SuiteIssue(
                    mark.file or doc.file,
                    mark.line,
                    mark.column,
                    f"test id {test_id!r} has no letters or digits to make a partition key from",
                    "use an id with letters or digits, e.g. id: my-test",
                )
            )
            continue
        if key in seen:
            # Positions are read only for a problem: a suite's may be kept unread (parse_cache).
            mark = doc.positions.value(("tests", index, "id"))
            first_id, first_index = seen[key]
            first_line = doc.positions.value(("tests", first_index, "id")).line
            if first_id == test_id:
                message = (
                    f"duplicate test id '{test_id}' (line {mark.line}): "
                    f"already used at line {first_line}"
                )
            else:
                message = (
                    f"test id '{test_id}' (line {mark.line}) collides with '{first_id}' "
                    f"(line {first_line}): both become the partition key '{key}'"
                )
            issues.append(
                SuiteIssue(
                    mark.file or doc.file,
                    mark.line,
                    mark.column,
                    message,
                    "give each test a unique id",
                )
            )
            continue
        seen[key] = (test_id, index)
    return issues


def dependency_issues(suite: EvalSuite, doc: YamlDocument) -> list[SuiteIssue]:
    """`depends_on` must name other tests of the suite, without a cycle (AgentV refuses to run
    such a suite: orchestrator.ts validateDependencyGraph)."""
    ids = [test.id for test in suite.tests]
    deps = {test.id: test.depends_on or [] for test in suite.tests}
    issues: list[SuiteIssue] = []

    def issue(path: DataPath, message: str, fix: str) -> None:
        mark = doc.positions.value(path)
        issues.append(SuiteIssue(mark.file or doc.file, mark.line, mark.column, message, fix))

    for index, test in enumerate(suite.tests):
        for d_index, dep in enumerate(test.depends_on or []):
            at = ("tests", index, "depends_on", d_index)
            if dep == test.id:
                issue(at, f"test '{test.id}' depends on itself", "remove it from depends_on")
            elif dep not in deps:
                close = difflib.get_close_matches(dep, ids, n=1, cutoff=0.6)
                fix = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(ids)}"
                issue(at, f"test '{test.id}' depends on '{dep}', which is not a test here", fix)

    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(test_id: str, path: list[str]) -> list[str] | None:
        if state.get(test_id) == 1:
            return [*path[path.index(test_id) :], test_id]
        if state.get(test_id) == 2:
            return None
        state[test_id] = 1
        for dep in deps.get(test_id, []):
            if dep != test_id and dep in deps:
                cycle = visit(dep, [*path, test_id])
                if cycle:
                    return cycle
        state[test_id] = 2
        return None

    for index, test_id in enumerate(ids):
        cycle = visit(test_id, [])
        if cycle:
            issue(
                ("tests", index, "depends_on"),
                f"circular dependency: {' → '.join(cycle)}",
                "remove one of these depends_on entries",
            )
            break
    return issues


def malformed_tool_calls(suite: EvalSuite, doc: YamlDocument) -> list[SuiteIssue]:
    """Expected tool calls must name their tool, or graders cannot compare them."""
    issues: list[SuiteIssue] = []
    for t_index, test in enumerate(suite.tests):
        for part in ("input", "expected_output"):
            spec: Any = getattr(test, part)
            if not isinstance(spec, list):
                continue
            for m_index, message in enumerate(spec):
                if not isinstance(message, MessageSpec):
                    continue
                for c_index, call in enumerate(message.tool_calls or []):
                    try:
                        ToolCall.model_validate(call)
                    except ValidationError:
                        path = ("tests", t_index, part, m_index, "tool_calls", c_index)
                        mark = doc.positions.value(path)
                        issues.append(
                            SuiteIssue(
                                mark.file or doc.file,
                                mark.line,
                                mark.column,
                                "a tool call needs 'tool', the tool's name",
                                "write it as {tool: Bash, input: {command: pytest}}",
                            )
                        )
    return issues


def ungradable_tests(
    suite: EvalSuite,
    doc: YamlDocument,
    targets: Mapping[str, TargetSpec] | None = None,
    run_targets: Mapping[str, str] | None = None,
    judges: Mapping[str, LlmTargetSpec] | None = None,
) -> list[SuiteIssue]:
    """Warnings for tests with no assertion that no implicit llm-grader can judge either.

    A test without assertions is judged on its criteria (and expected output) by an implicit
    llm-grader when its agent has a grader target. Without `targets` and `judges` the grader
    targets are unknown, and every test without assertions is reported.
    """
    warnings: list[SuiteIssue] = []
    for index, test in enumerate(suite.tests):
        if _assertions_of(suite, test) or test.mode == "conversation":
            continue
        gradable = bool(test.criteria or test.expected_output)
        if gradable and targets is not None and judges is not None:
            agents = test_agents(test, run_targets or {})
            if agents and all(
                agent in targets and grader_target_of(targets[agent], suite, judges)
                for agent in agents
            ):
                continue  # the implicit llm-grader judges it
        mark = doc.positions.key(("tests", index))
        if gradable:
            message = (
                f"test '{test.id}' has no assertions, and its criteria are judged by an "
                "llm-grader only when its agent has a grader target"
            )
            fix = (
                "add grader_target: <llm target> to the agent target (or a judging: panel), or "
                "add an assertion, e.g. a contains check or a code-grader"
            )
        else:
            message = f"test '{test.id}' has no assertions and no criteria"
            fix = "add an assertion (e.g. a contains check or a code-grader), or criteria"
        warnings.append(SuiteIssue(mark.file or doc.file, mark.line, mark.column, message, fix))
    return warnings


# --- LLM graders --------------------------------------------------------------------------------


def grader_target_of(
    target: TargetSpec, suite: EvalSuite, judges: Mapping[str, LlmTargetSpec]
) -> str | None:
    """The LLM target that judges an agent's llm-graders, by the first rule that gives one.

    The agent target's `grader_target`; else the target itself when it is an LLM target
    (AgentV's rule); else the first judge of the suite's `judging.panel`; else the only LLM
    target, when exactly one is defined; else None.
    """
    if target.grader_target:
        return target.grader_target
    if isinstance(target, LlmTarget) and target.name in judges:
        return target.name
    if suite.judging is not None and suite.judging.panel:
        return suite.judging.panel[0]
    if len(judges) == 1:
        return next(iter(judges))
    return None


@dataclass(frozen=True)
class GraderProblem:
    """An issue not yet placed in the file: the data path it is about, what, and the fix."""

    path: DataPath
    message: str
    fix: str
    warning: bool = False
    """Only a warning: the grader runs and AgentV's outcome is kept (a score of 0)."""
    tests: tuple[str, ...] = ()
    """The tests whose grading it stops: a run makes them errors without running their agent."""
    skips: bool = False
    """AgentV's loader skips `tests` for it: they are left out here too."""

    def at(self, doc: YamlDocument) -> SuiteIssue:
        mark = doc.positions.value(self.path)
        return SuiteIssue(mark.file or doc.file, mark.line, mark.column, self.message, self.fix)


def llm_grader_warnings(
    suite: EvalSuite,
    doc: YamlDocument,
    targets: Mapping[str, TargetSpec],
    run_targets: Mapping[str, str],
    judges: Mapping[str, LlmTargetSpec],
    problems: list[GraderProblem] | None = None,
) -> list[SuiteIssue]:
    """llm-graders naming a target that is not defined: AgentV loads the suite and that grader
    scores 0 when it runs ('target ... not found in targets'); said at load so users learn early.
    `problems`: grader_problems' of these arguments, when the caller has them already."""
    if problems is None:
        problems = grader_problems(suite, Path(doc.file).parent, targets, run_targets, judges)
    return [problem.at(doc) for problem in problems if problem.warning]


def grader_problems(
    suite: EvalSuite,
    base_dir: Path,
    targets: Mapping[str, TargetSpec],
    run_targets: Mapping[str, str],
    judges: Mapping[str, LlmTargetSpec],
) -> list[GraderProblem]:
    """LLM graders (and code graders on the target proxy) that cannot run: an unknown target,
    no grader target, a missing prompt file; before positions are looked up (they need the
    parsed document). AgentV accepts such a suite and fails the grader when it runs."""
    checker = _GraderChecker(suite, base_dir, targets, judges)
    suite_agents: list[str] = []
    suite_tests: list[str] = []
    for index, test in enumerate(suite.tests):
        agents = test_agents(test, run_targets)
        checker.assertions(test.assertions, ("tests", index, "assertions"), agents, (test.id,))
        for turn_index, turn in enumerate(test.turns or []):
            at: DataPath = ("tests", index, "turns", turn_index, "assertions")
            checker.assertions(turn.assertions, at, agents, (test.id,))
        skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
        if not skip:
            suite_agents += [a for a in agents if a not in suite_agents]
            suite_tests.append(test.id)
    checker.assertions(suite.assertions, ("assertions",), suite_agents, tuple(suite_tests))
    return list(dict.fromkeys(checker.problems))


class _GraderChecker:
    def __init__(
        self,
        suite: EvalSuite,
        base_dir: Path,
        targets: Mapping[str, TargetSpec],
        judges: Mapping[str, LlmTargetSpec],
    ) -> None:
        self.suite = suite
        self.base_dir = base_dir
        self.targets = targets
        self.judges = judges
        self.problems: list[GraderProblem] = []
        self.tests: tuple[str, ...] = ()

    def assertions(
        self,
        assertions: list[AssertionSpec],
        path: DataPath,
        agents: Sequence[str],
        tests: tuple[str, ...],
    ) -> None:
        self.tests = tests
        for relative, assertion in walk_assertions(assertions):
            at = (*path, *relative)
            if isinstance(assertion, CompositeAssertion) and isinstance(
                assertion.aggregator, LlmAggregator
            ):
                self.needs_grader_target(
                    (*at, "aggregator"),
                    agents,
                    None,
                    f"the aggregator of '{assertion.display_name()}'",
                )
            if isinstance(assertion, LlmGraderBase):
                self.llm_grader(assertion, at, agents)
            elif isinstance(assertion, CodeGraderAssertion) and assertion.proxy_max_calls:
                self.needs_grader_target(
                    at, agents, "target", f"the target proxy of '{assertion.display_name()}'"
                )

    def llm_grader(self, grader: LlmGraderBase, at: DataPath, agents: Sequence[str]) -> None:
        if grader.prompt_file is not None:
            file = absolute(grader.prompt_file, self.base_dir)
            if not is_file(file):
                self.problems.append(
                    GraderProblem(
                        (*at, "prompt"),
                        f"prompt file '{grader.prompt_file}' not found",
                        f"looked for {file}; create it or correct the path (relative to the "
                        "eval file's folder)",
                        tests=self.tests,
                    )
                )
        command = grader.prompt_command
        if command is not None and find_input_file(command.script, self.base_dir) is None:
            # AgentV's loader skips the test ("Skipping test ...: prompt command file not
            # found"); its validate accepts the file.
            self.problems.append(
                GraderProblem(
                    (*at, "prompt", "command"),
                    f"prompt command file '{command.script}' not found: the test is skipped, as "
                    "AgentV skips it",
                    "the command's last item must be the prompt script, relative to the eval "
                    "file's folder; create it or correct the path",
                    warning=True,
                    tests=self.tests,
                    skips=True,
                )
            )
        if grader.target is None:
            self.needs_grader_target(at, agents, None, f"'{grader.display_name()}'")
        elif grader.target not in self.judges:
            self.problems.append(self.unknown_target(grader.target, (*at, "target")))

    def needs_grader_target(
        self, at: DataPath, agents: Sequence[str], key: str | None, what: str
    ) -> None:
        for agent in agents:
            target = self.targets.get(agent)
            if target is None:
                continue
            named = grader_target_of(target, self.suite, self.judges)
            defined = ", ".join(self.judges)
            if named in self.judges:
                continue
            if named:
                # AgentV resolves grader_target only when an LLM grader needs it: here.
                self.problems.append(
                    GraderProblem(
                        (*at, key) if key else at,
                        f"{what} needs grader_target '{named}' of agent target "
                        f"'{target.name}', which is not an LLM target (LLM targets: "
                        f"{defined or 'none'})",
                        "set grader_target to an LLM target (provider: anthropic, openai, "
                        "azure, gemini or openrouter), or give the assertion a target:",
                        tests=self.tests,
                    )
                )
                continue
            self.problems.append(
                GraderProblem(
                    (*at, key) if key else at,
                    f"{what} has no grader target: agent target '{target.name}' has no "
                    "grader_target"
                    + (f" and the suite defines several LLM targets ({defined})" if defined else "")
                    + ("" if defined else " and the suite defines no LLM target"),
                    f"add grader_target: {next(iter(self.judges), '<llm target>')} to the agent "
                    f"target '{target.name}', or target: to the assertion"
                    + (
                        ""
                        if defined
                        else "; define an LLM target (provider: anthropic or openai, model: ...)"
                    ),
                    tests=self.tests,
                )
            )

    def unknown_target(self, name: str, at: DataPath) -> GraderProblem:
        defined = ", ".join(self.judges) or "none"
        if any(t.name == name for t in self.targets.values()):
            return GraderProblem(
                at,
                f"llm-grader target '{name}' is an agent, not an LLM target (LLM targets: "
                f"{defined})",
                "name a target with provider: anthropic or openai",
                tests=self.tests,
            )
        close = difflib.get_close_matches(name, list(self.judges), n=1, cutoff=0.6)
        return GraderProblem(
            at,
            f"llm-grader target '{name}' is not defined (LLM targets: {defined}); this grader "
            "will score 0, as in AgentV",
            f"did you mean '{close[0]}'?"
            if close
            else "define it under targets: with provider: anthropic or openai and a model",
            warning=True,
        )


def _assertions_of(suite: EvalSuite, test: TestSpec) -> list[AssertionSpec]:
    skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
    return [*test.assertions, *([] if skip else suite.assertions)]
