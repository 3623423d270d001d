"""What will certainly fail when a suite runs, found before any agent starts: a code grader whose
program or script cannot start, a cli agent whose command is not found.

AgentV accepts such a suite and fails when it runs (the grader scores 0, the agent errors).
Here `validate` warns at the line that names it, and `run` makes each case that cannot be graded
(or whose agent cannot start) an error at once, its agent never run nor paid for.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evals_pipeline.models.assertions import AssertionSpec, CodeGraderAssertion, walk_assertions
from evals_pipeline.models.assertions.custom import CustomAssertion
from evals_pipeline.models.suite import EvalSuite
from evals_pipeline.models.targets import CliTarget, TargetSpec
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.paths import absolute, find_in_search_dirs
from evals_pipeline.suites.probes import is_dir, working_folder
from evals_pipeline.suites.programs import StartProblem, child_path, start_problem
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument

_PLACEHOLDER = re.compile(r"\{[A-Z_]+\}")


@dataclass
class Preflight:
    """The warnings to print, and which cases a run makes errors without running them."""

    warnings: list[SuiteIssue] = field(default_factory=list)
    ungradable: dict[str, str] = field(default_factory=dict)
    """Test id → why it cannot be graded (a located message)."""
    unstartable: dict[str, str] = field(default_factory=dict)
    """Agent slug → why its command cannot start (a located message)."""

    def cannot_grade(self, tests: Iterable[str], at: SuiteIssue) -> None:
        """Warn at `at` that its grader cannot run, and make `tests` ungradable for that."""
        issue = SuiteIssue(
            at.file,
            at.line,
            at.column,
            f"{at.message}; its tests cannot be graded, so a run makes them errors without "
            "running their agent",
            at.fix,
        )
        self.warnings.append(issue)
        reason = f"{at.file}:{at.line}:{at.column}: {at.message}"
        for test in tests:
            before = self.ungradable.get(test)
            self.ungradable[test] = (
                f"{before}; {reason}" if before else f"cannot be graded: {reason}"
            )


def preflight(
    suite: EvalSuite,
    doc: YamlDocument,
    targets: Mapping[str, TargetSpec],
    fallbacks: Mapping[str, list[TargetSpec]],
    command_at: Callable[[str], SuiteIssue],
) -> Preflight:
    """Check every code grader of the suite and the command of every cli agent it runs.
    `command_at(target_name)` is where that target's `command` is written."""
    found = Preflight()
    base_dir = Path(doc.file).parent

    def warn(at: SuiteIssue, message: str, fix: str) -> str:
        issue = SuiteIssue(at.file, at.line, at.column, message, fix)
        found.warnings.append(issue)
        return f"{issue.file}:{issue.line}:{issue.column}: {message}"

    checked: dict[DataPath, str | None] = {}
    problems: dict[tuple[object, str | None], StartProblem | None] = {}

    def graders(assertions: list[AssertionSpec], path: DataPath) -> list[str]:
        reasons: list[str] = []
        for relative, assertion in walk_assertions(assertions):
            if not isinstance(assertion, CodeGraderAssertion | CustomAssertion):
                continue
            at = (*path, *relative, "command")
            if at not in checked:
                checked[at] = None
                command = assertion.command
                key = (tuple(command) if isinstance(command, list) else command, assertion.cwd)
                if key not in problems:  # one look per distinct command (10,000 tests share one)
                    problems[key] = start_problem(command, _grader_cwd(assertion, base_dir))
                problem = problems[key]
                if problem is not None:
                    mark = doc.positions.value(at)
                    checked[at] = warn(
                        SuiteIssue(mark.file or doc.file, mark.line, mark.column, "", ""),
                        f"{_what(assertion)} '{assertion.display_name()}' cannot start: "
                        f"{problem.message}; its tests cannot be graded, so a run makes them "
                        "errors without running their agent",
                        problem.fix,
                    )
            reason = checked[at]
            if reason is not None:
                reasons.append(reason)
        return reasons

    shared = graders(suite.assertions, ("assertions",))
    for index, test in enumerate(suite.tests):
        at: DataPath = ("tests", index)
        reasons = graders(test.assertions, (*at, "assertions"))
        for t_index, turn in enumerate(test.turns or []):
            reasons += graders(turn.assertions, (*at, "turns", t_index, "assertions"))
        skip = suite.execution.skip_defaults or (test.execution and test.execution.skip_defaults)
        reasons += [] if skip else shared
        if reasons:
            found.ungradable[test.id] = "cannot be graded: " + "; ".join(dict.fromkeys(reasons))

    # A cli command runs in the workspace when the suite has one: relative paths are made then.
    workspaces = suite.workspace is not None or any(t.workspace for t in suite.tests)
    for agent, target in targets.items():
        if not isinstance(target, CliTarget):
            continue
        cwd = Path(target.cwd) if target.cwd else base_dir
        command = _filled(target.command, doc)
        problem = start_problem(command, None if workspaces else cwd, child_path(target.env))
        if problem is None:
            continue
        runs_instead = "; its fallback targets run instead" if fallbacks.get(agent) else ""
        reason = warn(
            command_at(target.name),
            f"the command of target '{target.name}' cannot start: {problem.message}"
            + (runs_instead or "; a run makes its cases errors without starting it"),
            problem.fix,
        )
        if not runs_instead:
            found.unstartable[agent] = f"agent cannot start: {reason}"
    return found


def _what(assertion: CodeGraderAssertion | CustomAssertion) -> str:
    return "code-grader" if isinstance(assertion, CodeGraderAssertion) else "custom grader"


def _filled(command: str, doc: YamlDocument) -> str:
    """A cli command with the placeholders known at load filled (the eval file and its folder);
    the others become a shell expansion, which start_problem does not judge."""
    known = {"EVAL_FILE": doc.file, "EVAL_DIR": str(Path(doc.file).parent)}

    def fill(match: re.Match[str]) -> str:
        name = match.group(0)[1:-1]
        return shlex.quote(known[name]) if name in known else "$PLACEHOLDER"

    return _PLACEHOLDER.sub(fill, command)


def _grader_cwd(grader: CodeGraderAssertion | CustomAssertion, base_dir: Path) -> Path | None:
    """The folder the grader runs in (as resolve.py makes it), or None when it is missing."""
    if not grader.cwd:
        return base_dir
    folder = find_in_search_dirs(grader.cwd, base_dir, folder=True)
    folder = folder or absolute(grader.cwd, Path(working_folder()))
    return folder if is_dir(folder) else None
