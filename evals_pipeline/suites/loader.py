"""Loading an eval file: parse, rewrite old spellings, validate, find targets, check files.

Every problem found is collected and raised together as one SuiteError, each issue with the
file, line and column of what the user wrote and a concrete fix.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.models.suite import EvalSuite
from evals_pipeline.models.targets import LlmTargetSpec, TargetSpec
from evals_pipeline.models.workspace import ResolvedHooks
from evals_pipeline.suites.agent_skills import (
    agent_skills_suite,
    attached_files,
    is_agent_skills_file,
)
from evals_pipeline.suites.aliases import rewrite_suite_aliases
from evals_pipeline.suites.consistency import (
    GraderProblem,
    dependency_issues,
    duplicate_test_ids,
    grader_problems,
    llm_grader_warnings,
    malformed_tool_calls,
    ungradable_tests,
)
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.incomplete_tests import drop_incomplete_tests
from evals_pipeline.suites.interpolation import interpolate, load_env_files, unset_variables
from evals_pipeline.suites.preflight import Preflight, preflight
from evals_pipeline.suites.probes import Probes, environment, recording, resolved
from evals_pipeline.suites.references import missing_references
from evals_pipeline.suites.slugs import suite_slug
from evals_pipeline.suites.suite_parts import jsonl_suite, splice_suite_parts
from evals_pipeline.suites.target_catalog import (
    TargetCatalog,
    find_targets_file,
    load_targets_file,
    no_targets_file_issue,
)
from evals_pipeline.suites.targets import (
    Selection,
    judging_issues,
    select_targets,
    test_target_warnings,
)
from evals_pipeline.suites.template_vars import fill_test
from evals_pipeline.suites.unknown_keys import validate_leniently
from evals_pipeline.suites.yaml_positions import YamlDocument, read_yaml_file

_SUFFIXES = (".eval.yaml", ".eval.yml", ".yaml", ".yml", ".evals.json", ".json")


class LoadedSuite(BaseModel):
    """A validated suite with its selected targets, ready to be resolved into cases."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path = Field(description="The eval file, absolute.")
    slug: str = Field(description="Suite key: a valid Dagster asset-key prefix and group name.")
    suite: EvalSuite
    targets: dict[str, TargetSpec] = Field(
        description="Agent slug → target, in the order the suite selects them; paths absolute."
    )
    default_agents: list[str] = Field(
        default_factory=list,
        description="The agents the suite runs (a test's execution.targets may keep some).",
    )
    judges: dict[str, LlmTargetSpec] = Field(
        default_factory=dict,
        description="LLM targets by name (paths absolute): judges, grader targets.",
    )
    target_hooks: dict[str, ResolvedHooks] = Field(
        default_factory=dict, description="Agent slug → hooks of its execution.targets entry."
    )
    fallbacks: dict[str, list[TargetSpec]] = Field(
        default_factory=dict, description="Agent slug → its fallback targets, in order."
    )
    agent_of: dict[str, str] = Field(
        default_factory=dict,
        description="The names of the targets the suite runs, as written in the suite (or the "
        "default it falls back to) → agent slug (use_target resolved): AgentV's target "
        "selections, which a test's execution.targets chooses among.",
    )
    targets_file: Path | None = Field(
        default=None,
        description="The targets file used (found as AgentV finds it, or run --targets); None "
        "for inline targets or when there is none.",
    )
    targets_given: Path | None = Field(
        default=None,
        description="The targets file the load was given (run --targets), which every reload of "
        "the suite for the same run is given too; None when it was found as AgentV finds it.",
    )
    attached_files: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Test id → absolute paths given to its agent ({FILES}) and graders "
        "(input_files) but not in its prompt: an Agent Skills case's `files`.",
    )
    warnings: list[SuiteIssue] = Field(default_factory=list)
    run_issues: list[SuiteIssue] = Field(
        default_factory=list,
        description="Why a target the suite runs cannot be resolved (an undefined name, an "
        "unset ${{ VAR }} in use_target, an invalid or unsupported target, no targets file). As "
        "in AgentV these fail the run, not the load: resolve_cases raises them.",
    )

    ungradable: dict[str, str] = Field(
        default_factory=dict,
        description="Test id → why it cannot be graded (a code grader that cannot start): a "
        "run makes its cases errors without running their agent (preflight.py).",
    )
    unstartable: dict[str, str] = Field(
        default_factory=dict,
        description="Agent slug → why its command cannot start: a run makes its cases errors.",
    )

    _inputs: Probes | None = PrivateAttr(default=None)
    """What load_suite read to make this suite (probes.py); None for a suite made otherwise."""

    @property
    def base_dir(self) -> Path:
        """The eval file's folder: relative paths in the suite resolve from here."""
        return self.path.parent

    def inputs_hold(self) -> bool:
        """Whether loading its eval file again would read what this load read: the same files
        and folders, environment, working and home folders. A cases sensor's tick then takes
        this suite instead of loading it again (~1 s for 10,000 tests)."""
        return self._inputs is not None and self._inputs.hold()


def read_suite_document(file: Path) -> tuple[YamlDocument, list[SuiteIssue], list[SuiteIssue]]:
    """An eval file's data as AgentV reads it, before validation: `(doc, warnings, errors)`.

    External tests and workspace files are spliced in, older spellings rewritten, `.env` files
    loaded and `${{ VAR }}` filled, then each test's `{{vars}}`. Positions follow every step.
    """
    if is_agent_skills_file(file):
        return agent_skills_suite(file)  # AgentV neither splices nor interpolates these
    doc = jsonl_suite(file) if file.suffix == ".jsonl" else read_yaml_file(file)
    if not isinstance(doc.data, dict):
        return doc, [], []
    issues = splice_suite_parts(doc)
    skipped, unrunnable = drop_incomplete_tests(doc, jsonl=file.suffix == ".jsonl")
    warnings, renamed = rewrite_suite_aliases(doc)
    warnings += skipped
    load_env_files(file)
    if _may_hold_placeholders(doc.data):
        warnings += unset_variables(doc)
        doc.data = interpolate(doc.data)
    tests = doc.data.get("tests")
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict):
            fill_test(test)
    return doc, warnings, issues + unrunnable + renamed


def _may_hold_placeholders(data: Any) -> bool:
    """Whether some string may hold `${{ VAR }}`: one scan of the data's bytes (marshal keeps
    each string's UTF-8 whole) spares two walks of a 10,000-test suite that has none."""
    try:
        return b"${{" in marshal.dumps(data)
    except ValueError:  # a value marshal cannot write (a `!!timestamp`): walk it
        return True


def load_suite(path: str | Path, targets_file: Path | None = None) -> LoadedSuite:
    """Load and check one eval file; raises SuiteError listing every problem found. The suite
    keeps what the load read (`inputs_hold`). `targets_file` (`run --targets`) is the targets
    file of a suite without inline targets, instead of the one AgentV would find."""
    with gc_paused(kept=True), recording() as done:
        loaded = _load_suite(resolved(Path(path).expanduser()), targets_file)
        loaded.targets_given = targets_file
        environment()  # as the load left it: `.env` files fill what the shell did not set
    loaded._inputs = done[0]
    return loaded


def _load_suite(file: Path, targets_given: Path | None) -> LoadedSuite:
    """One suite file read, validated and checked against its targets; every problem in one
    SuiteError."""
    doc, warnings, issues = _read_suite_mapping(file)
    suite: EvalSuite | None = None
    try:
        suite = validate_leniently(EvalSuite, doc, warnings)
    except SuiteError as exc:
        issues += exc.issues
    found = _find_catalog(suite, doc, file, targets_given)
    catalog, targets_file, catalog_issues, targets_unreadable = found
    issues += catalog_issues
    if suite is None:
        raise SuiteError(issues)
    selection = Selection()
    run_issues: list[SuiteIssue] = []
    graders: list[GraderProblem] | None = None
    if catalog is not None:
        selection = select_targets(suite, doc, catalog)
        issues += selection.issues
        issues += judging_issues(suite, doc, selection.judges)
        graders = grader_problems(
            suite,
            Path(doc.file).parent,
            selection.targets,
            selection.agent_of,
            selection.judges,
        )  # once for the issues and (below) the warnings
    elif not targets_unreadable:
        # As in AgentV, only a run needs the targets file: `validate` warns.
        run_issues.append(no_targets_file_issue(doc))
    run_issues += _drop_skipped_tests(suite, doc, graders)
    issues += dependency_issues(suite, doc)
    issues += malformed_tool_calls(suite, doc)
    issues += missing_references(suite, doc, file.parent, warnings)
    if issues:  # the file must change anyway: say everything at once
        raise SuiteError(issues + selection.run_issues + run_issues)
    checked = preflight(
        suite, doc, selection.targets, selection.fallbacks, _command_at(catalog, doc)
    )
    for problem in graders or []:
        if not problem.warning:
            checked.cannot_grade(problem.tests, problem.at(doc))
    return _loaded_suite(
        file, doc, suite, selection, catalog, targets_file, run_issues, checked, warnings, graders
    )


def _read_suite_mapping(file: Path) -> tuple[YamlDocument, list[SuiteIssue], list[SuiteIssue]]:
    """The suite document, its warnings and issues; raises when it is no mapping or its tests file
    could not be read, as there is nothing to validate then."""
    doc, warnings, issues = read_suite_document(file)
    if not isinstance(doc.data, dict):
        got = "empty" if doc.data is None else "not a mapping"
        raise SuiteError(
            [
                SuiteIssue(
                    doc.file,
                    1,
                    1,
                    f"the eval file is {got}",
                    "write the suite as key: value lines with a tests: list, e.g. "
                    "tests: [{id: my-test, input: Say hello, criteria: Greets the user}]",
                )
            ]
        )
    if issues and not isinstance(doc.data.get("tests"), list):
        raise SuiteError(issues)  # the tests file could not be read: nothing to validate
    issues += duplicate_test_ids(doc)
    return doc, warnings, issues


def _find_catalog(
    suite: EvalSuite | None, doc: YamlDocument, file: Path, targets_given: Path | None
) -> tuple[TargetCatalog | None, Path | None, list[SuiteIssue], bool]:
    """The suite's targets: inline, else from the targets file found near it. Returns the
    catalog, that file, its issues, and whether it was there but could not be read."""
    if suite is not None and suite.targets:
        catalog = TargetCatalog(doc=doc, specs=suite.targets, base_dir=file.parent, inline=True)
        return catalog, None, [], False
    if doc.data.get("targets"):
        return None, None, [], False
    targets_file = find_targets_file(file, targets_given)
    if targets_file is None:
        return None, None, [], False
    try:
        return load_targets_file(targets_file), targets_file, [], False
    except SuiteError as exc:
        return None, targets_file, exc.issues, True


def _drop_skipped_tests(
    suite: EvalSuite, doc: YamlDocument, graders: list[GraderProblem] | None
) -> list[SuiteIssue]:
    """Drop the tests a grader problem skips; when none is left, the run issues that say why."""
    skipped = {test for problem in graders or [] if problem.skips for test in problem.tests}
    if not skipped:
        return []
    suite.tests = [test for test in suite.tests if test.id not in skipped]
    if suite.tests:
        return []
    # as `agentv eval` fails then, only a run: validate accepts it
    return [p.at(doc) for p in graders or [] if p.skips]


def _loaded_suite(
    file: Path,
    doc: YamlDocument,
    suite: EvalSuite,
    selection: Selection,
    catalog: TargetCatalog | None,
    targets_file: Path | None,
    run_issues: list[SuiteIssue],
    checked: Preflight,
    warnings: list[SuiteIssue],
    graders: list[GraderProblem] | None,
) -> LoadedSuite:
    """The loaded suite from a valid file, every warning found on the way sorted by position."""
    return LoadedSuite(
        path=file,
        slug=_slug(suite, doc),
        suite=suite,
        targets=selection.targets,
        default_agents=selection.default_agents,
        judges=selection.judges,
        target_hooks=selection.target_hooks,
        agent_of=selection.agent_of,
        fallbacks=selection.fallbacks,
        targets_file=targets_file,
        attached_files=attached_files(suite) if is_agent_skills_file(file) else {},
        run_issues=selection.run_issues + run_issues,
        ungradable=checked.ungradable,
        unstartable=checked.unstartable,
        warnings=sorted(
            warnings
            + checked.warnings
            + (catalog.warnings if catalog is not None else [])
            + (catalog.unset_in(_names_run(selection)) if catalog is not None else [])
            + llm_grader_warnings(
                suite, doc, selection.targets, selection.agent_of, selection.judges, graders
            )
            + test_target_warnings(suite, doc)
            + ungradable_tests(suite, doc, selection.targets, selection.agent_of, selection.judges),
            key=lambda w: (w.file, w.line, w.column),
        ),
    )


def _names_run(selection: Selection) -> list[str]:
    """The names of the targets a run reads: those the suite names, the concrete targets they
    lead to, their fallbacks and their grader targets."""
    names = list(selection.agent_of)
    for agent, target in selection.targets.items():
        names += [target.name, *(f.name for f in selection.fallbacks.get(agent, []))]
        names += [target.grader_target] if target.grader_target else []
    return names


def _command_at(catalog: TargetCatalog | None, doc: YamlDocument) -> Callable[[str], SuiteIssue]:
    """Where a target's `command` is written (in the suite or its targets file)."""

    def at(name: str) -> SuiteIssue:
        specs = catalog.specs if catalog is not None else []
        for index, spec in enumerate(specs):
            if spec.name == name and catalog is not None:
                return catalog.position(index, "command")
        mark = doc.positions.value(("execution",))  # renamed: a use_target name
        return SuiteIssue(mark.file or doc.file, mark.line, mark.column, "", "")

    return at


def _slug(suite: EvalSuite, doc: YamlDocument) -> str:
    file = Path(doc.file)
    if suite.name:
        source = suite.name
    elif file.name == "EVAL.yaml":
        source = file.parent.name  # one EVAL.yaml per folder: the folder names the suite
    else:
        source = next((file.name[: -len(s)] for s in _SUFFIXES if file.name.endswith(s)), file.stem)
    try:
        return suite_slug(source)
    except ValueError:
        raise SuiteError(
            [
                SuiteIssue(
                    doc.file,
                    1,
                    1,
                    f"cannot make a suite key from {source!r}: it has no letters or digits",
                    "set name: my-suite at the top of the file",
                )
            ]
        ) from None
