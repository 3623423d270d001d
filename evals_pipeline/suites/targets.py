"""Target selection: which targets of the catalog (target_catalog.py) a suite runs, and their
paths.

Inline `targets:` in the suite win; otherwise the targets file AgentV finds (target_catalog.py).
Relative paths in a target (`sessions_dir`, `model_server.script`, an `executable` with a slash)
resolve against the folder that owns the definition: the eval file's folder for inline targets,
the project folder holding `.agentv/` (or the folder of a plain `targets.yaml`) for a targets
file; a cli target's `cwd` and `healthcheck.cwd` against the eval file's folder, as in AgentV. A
cli command without `cwd` runs in the eval file's folder (or the workspace), as in AgentV, so
`cwd` is left unset then.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from evals_pipeline.agents.registry import PROVIDERS
from evals_pipeline.models.suite import EvalSuite, TargetRef, TestSpec
from evals_pipeline.models.targets import (
    UNSUPPORTED_PROVIDERS,
    AgentTarget,
    CliTarget,
    DelegateTarget,
    LlmTarget,
    LlmTargetSpec,
    ReplayTarget,
    TargetSpec,
    UnsupportedTarget,
)
from evals_pipeline.models.workspace import ResolvedHooks
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.hooks import target_hooks
from evals_pipeline.suites.paths import absolute
from evals_pipeline.suites.probes import exists, is_dir, is_file
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.target_catalog import (
    NO_TARGETS_FIX,
    CatalogEntry,
    InvalidTarget,
    TargetCatalog,
)
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument

MAX_DELEGATION_DEPTH = 10
"""AgentV's limit on use_target chains."""


@dataclass
class Selection:
    """The targets a suite runs: every selected target by agent slug, and the default agents."""

    targets: dict[str, TargetSpec] = field(default_factory=dict)
    default_agents: list[str] = field(default_factory=list)
    """The agents the suite runs (a test's `execution.targets` may keep some of them)."""
    judges: dict[str, LlmTargetSpec] = field(default_factory=dict)
    """LLM targets by name: the judges a suite's graders and panel may name."""
    target_hooks: dict[str, ResolvedHooks] = field(default_factory=dict)
    """Hooks of `execution.targets[]` entries, by agent slug (run around the workspace's)."""
    agent_of: dict[str, str] = field(default_factory=dict)
    """The names of the targets the suite runs, as it writes them (or the default it falls
    back to) → their agent slug (delegation resolved): AgentV's target selections."""
    fallbacks: dict[str, list[TargetSpec]] = field(default_factory=dict)
    """Agent slug → the concrete targets of its `fallback_targets`, in order."""
    issues: list[SuiteIssue] = field(default_factory=list)
    run_issues: list[SuiteIssue] = field(default_factory=list)
    """Why a target the suite runs cannot be resolved (an undefined name, an unset `${{ VAR }}`
    in use_target, an invalid or unsupported target): AgentV fails the run on these, not the
    load, so they are raised when the suite's cases are resolved."""


class _Selector:
    def __init__(self, suite: EvalSuite, suite_doc: YamlDocument, catalog: TargetCatalog) -> None:
        self.suite = suite
        self.suite_doc = suite_doc
        self.catalog = catalog
        self.selection = Selection()
        self.by_name: dict[str, int] = {}
        self.selected_names = self.selection.agent_of
        self._index_catalog()

    def _index_catalog(self) -> None:
        slugs: dict[str, str] = {}
        for index, spec in enumerate(self.catalog.specs):
            # Read only for a problem: a suite's positions may be kept unread (parse_cache).
            at = functools.partial(self.catalog.position, index, "name")
            if spec.name in self.by_name:
                first = self.catalog.position(self.by_name[spec.name], "name")
                self._issue(
                    at(),
                    f"duplicate target name '{spec.name}' (first at line {first.line})",
                    "give each target a unique name",
                )
                continue
            try:
                slug = slugify(spec.name)
            except ValueError:
                self._issue(
                    at(),
                    f"target name {spec.name!r} has no letters or digits",
                    "name the target with letters, digits and '-'",
                )
                continue
            if slug in slugs:
                self._issue(
                    at(),
                    f"target names '{slugs[slug]}' and '{spec.name}' both become the agent "
                    f"key '{slug}'",
                    "rename one of them",
                )
                continue
            slugs[slug] = spec.name
            self.by_name[spec.name] = index

    def _issue(self, at: SuiteIssue, message: str, fix: str) -> None:
        self.selection.issues.append(
            SuiteIssue(at.file, at.line, at.column, message=message, fix=fix)
        )

    def _run_issue(self, at: SuiteIssue, message: str, fix: str) -> None:
        self.selection.run_issues.append(
            SuiteIssue(at.file, at.line, at.column, message=message, fix=fix)
        )

    def _suite_position(self, path: DataPath) -> SuiteIssue:
        mark = self.suite_doc.positions.value(path)
        return SuiteIssue(mark.file or self.suite_doc.file, mark.line, mark.column, "", "")

    def select(
        self,
        name: str,
        path: DataPath,
        use_target: str | None = None,
        hooks: ResolvedHooks | None = None,
    ) -> str | None:
        """Add the target `name` (or the one `use_target` names), following `use_target`
        delegation to a concrete target; its agent slug, or None (an issue is recorded).

        As in AgentV, the agent is labelled with the concrete target's name, so names that
        resolve to the same target (with the same hooks) are one agent.
        """
        try:
            slugify(name)
        except ValueError:
            self._issue(
                self._suite_position(path),
                f"target name {name!r} has no letters or digits",
                "name a target with letters, digits and '-'",
            )
            return None
        if use_target is None and name in self.selected_names:
            return self.selected_names[
                name
            ]  # e.g. a test naming a matrix entry `{name, use_target}`
        index = self._resolve(use_target or name, path)
        if index is None:
            return None
        spec = self.catalog.specs[index]
        if isinstance(spec, InvalidTarget):
            self.selection.run_issues.extend(spec.issues)
            return None
        if isinstance(spec, UnsupportedTarget):
            self._unsupported(spec, index)
            return None
        slug = slugify(spec.name)
        taken = self.selection.targets.get(slug)
        if taken is not None and self.selection.target_hooks.get(slug) != hooks:
            slug = slugify(name)  # the same target with other hooks: an agent of its own
            taken = self.selection.targets.get(slug)
        if taken is None:
            resolved = self._with_absolute_paths(spec, index)
            if slug != slugify(resolved.name):
                resolved = resolved.model_copy(update={"name": name})
            self.selection.targets[slug] = resolved
            if hooks is not None:
                self.selection.target_hooks[slug] = hooks
            fallbacks = self._fallbacks(spec)
            if fallbacks:
                self.selection.fallbacks[slug] = fallbacks
        self.selected_names[name] = slug
        return slug

    def _fallbacks(self, spec: TargetSpec) -> list[TargetSpec]:
        """The runnable targets `fallback_targets` names; like AgentV, a name that does not
        resolve (or cannot run) is skipped."""
        found: list[TargetSpec] = []
        for name in spec.fallback_targets:
            index = self._quiet_resolve(name) if name in self.by_name else None
            fallback = self.catalog.specs[index] if index is not None else None
            if isinstance(fallback, InvalidTarget):
                # AgentV resolves a fallback when it builds the run: a broken one fails it.
                self.selection.run_issues.extend(fallback.issues)
            if fallback is None or isinstance(fallback, InvalidTarget | UnsupportedTarget):
                continue
            assert index is not None
            found.append(self._with_absolute_paths(fallback, index))
        return found

    def _unsupported(self, spec: UnsupportedTarget, index: int) -> None:
        """The error for running a target whose provider has no adapter here, at its provider."""
        written = spec.agentv_provider
        close = difflib.get_close_matches(written.lower(), PROVIDERS, n=1, cutoff=0.6)
        if close and written.strip().lower() not in UNSUPPORTED_PROVIDERS:
            fix = f"did you mean '{close[0]}'? (providers: {', '.join(PROVIDERS)})"
        else:
            fix = (
                f"run '{written}' through provider: cli with a command, e.g. command: my-agent "
                "--prompt-file {PROMPT_FILE} --output {OUTPUT_FILE} (or choose another target)"
            )
        self._run_issue(
            self.catalog.position(index, "provider"),
            f"target '{spec.name}' cannot run: {spec.reason()}",
            fix,
        )

    def _resolve(self, name: str, path: DataPath) -> int | None:
        """The catalog index of the concrete target `name` stands for (use_target followed up
        to 10 times, AgentV's limit), or None with an issue."""
        chain = [name]
        for _ in range(MAX_DELEGATION_DEPTH + 1):
            current = chain[-1]
            if current not in self.by_name:
                close = difflib.get_close_matches(current, list(self.by_name), n=1, cutoff=0.6)
                where = "targets: in the suite" if self.catalog.inline else self.catalog.doc.file
                via = f" (reached through use_target from '{chain[0]}')" if len(chain) > 1 else ""
                self._run_issue(
                    self._suite_position(path),
                    f"target '{current}' is not defined{via}; {self.catalog.describe()}",
                    f"did you mean '{close[0]}'?" if close else f"define it in {where}",
                )
                return None
            index = self.by_name[current]
            delegate = self.catalog.specs[index].use_target
            if delegate is None:
                return index
            delegate = delegate.strip()
            if not delegate:
                self._run_issue(
                    self.catalog.position(index, "use_target"),
                    f"target '{current}' has an empty use_target (an unset ${{{{ VAR }}}}?)",
                    "set the variable to the name of a concrete target, or name one here",
                )
                return None
            if delegate in chain:
                self._run_issue(
                    self.catalog.position(index, "use_target"),
                    f"circular use_target: {' -> '.join([*chain, delegate])}",
                    "point one of these targets at a concrete target (one with a provider)",
                )
                return None
            chain.append(delegate)
        self._run_issue(
            self._suite_position(path),
            f"use_target chain from '{name}' is deeper than {MAX_DELEGATION_DEPTH}: "
            f"{' -> '.join(chain)}",
            "point the target at a concrete target directly",
        )
        return None

    def _with_absolute_paths(self, spec: TargetSpec, index: int) -> TargetSpec:
        if isinstance(spec, CliTarget):
            # AgentV resolves a cli target's cwd and its healthcheck's cwd from the eval file's
            # folder, wherever the targets file is (providers/targets.ts).
            eval_dir = Path(self.suite_doc.file).parent
            update: dict[str, object] = {}
            if spec.cwd:
                cwd = absolute(spec.cwd, eval_dir)
                self._require_dir(cwd, index, "cwd", spec.cwd, eval_dir)
                update["cwd"] = str(cwd)
            if spec.healthcheck and spec.healthcheck.cwd:
                hc_cwd = absolute(spec.healthcheck.cwd, eval_dir)
                self._require_dir(hc_cwd, index, "healthcheck", spec.healthcheck.cwd, eval_dir)
                update["healthcheck"] = spec.healthcheck.model_copy(update={"cwd": str(hc_cwd)})
            return spec.model_copy(update=update) if update else spec
        if isinstance(spec, ReplayTarget):
            return self._replay_paths(spec, index)
        if isinstance(spec, AgentTarget | LlmTarget):
            return cast(TargetSpec, self._agent_paths(spec, index))
        return spec

    def _replay_paths(self, spec: ReplayTarget, index: int) -> ReplayTarget:
        if spec.sessions_dir is not None:
            sessions = absolute(spec.sessions_dir, self.catalog.base_dir)
            self._require_dir(sessions, index, "sessions_dir", spec.sessions_dir)
            return spec.model_copy(update={"sessions_dir": str(sessions)})
        key = "fixtures" if spec.fixtures is not None else "execution_traces"
        written = spec.fixtures or spec.execution_traces
        assert written is not None
        # AgentV resolves both files against the eval file's folder, wherever the target is.
        source = absolute(written, Path(self.suite_doc.file).parent)
        if not is_file(source):
            record = (
                "record one with `agentv eval --record-replay FILE`"
                if key == "fixtures"
                else "use the outputs/trace.json an `agentv eval` run writes for each test"
            )
            self._issue(
                self.catalog.position(index, key),
                f"replay {key} file '{written}' not found",
                f"looked for {source}; {record} or correct the path (relative to the eval file)",
            )
        return spec.model_copy(update={key: str(source)})

    def _agent_paths(self, spec: AgentTarget | LlmTarget, index: int) -> AgentTarget | LlmTarget:
        base = self.catalog.base_dir
        update: dict[str, object] = {}
        if isinstance(spec, AgentTarget) and spec.executable and "/" in spec.executable:
            update["executable"] = str(absolute(spec.executable, base))
        if spec.model_server:
            script = absolute(spec.model_server.script, base)
            # With {EVAL_ID} each test has its own script; the adapter checks it per run.
            expected = script.parent if "{EVAL_ID}" in script.name else script
            if not exists(expected):
                self._issue(
                    self.catalog.position(index, "model_server", "script"),
                    f"model server script '{spec.model_server.script}' not found",
                    f"looked for {expected}; create it or correct the path (relative to "
                    f"{self.catalog.base_dir})",
                )
            update["model_server"] = spec.model_server.model_copy(update={"script": str(script)})
        return spec.model_copy(update=update) if update else spec

    def _require_dir(
        self, folder: Path, index: int, key: str, written: str, base: Path | None = None
    ) -> None:
        if is_dir(folder):
            return
        owner = "the eval file's folder" if base or self.catalog.inline else "the project folder"
        base = base or self.catalog.base_dir
        what = "replay sessions folder" if key == "sessions_dir" else f"target {key} folder"
        keys = ("healthcheck", "cwd") if key == "healthcheck" else (key,)
        self._issue(
            self.catalog.position(index, *keys),
            f"{what} '{written}' not found",
            f"looked for {folder}; create it or correct the path (relative to {owner}, {base})",
        )

    def run(self) -> Selection:
        execution = self.suite.execution
        listed = [
            t if isinstance(t, TargetRef) else TargetRef(name=t) for t in execution.targets or []
        ]
        requested: list[tuple[TargetRef, DataPath]] = []
        if execution.target and execution.target not in [ref.name for ref in listed]:
            requested.append((TargetRef(name=execution.target), ("execution", "target")))
        for index, ref in enumerate(listed):
            raw = (execution.targets or [])[index]
            at: DataPath = ("execution", "targets", index)
            if isinstance(raw, TargetRef):
                at = (*at, "use_target") if ref.use_target else (*at, "name")
            requested.append((ref, at))

        for ref, at in requested:
            hooks = target_hooks(ref.hooks, Path(self.suite_doc.file).parent)
            slug = self.select(ref.name, at, ref.use_target, hooks)
            if slug and slug not in self.selection.default_agents:
                self.selection.default_agents.append(slug)

        if not requested:
            self._default_target()
        self._index_judges()
        return self.selection

    def _index_judges(self) -> None:
        """Every LLM target of the catalog, paths absolute: the judges graders may name.

        A delegating name (`use_target`) that leads to an LLM target is a judge too, under its
        own name; a chain that goes nowhere is reported only when something selects it.
        """
        for name, index in self.by_name.items():
            target = self._quiet_resolve(name)
            spec = self.catalog.specs[target] if target is not None else None
            if isinstance(spec, LlmTarget):
                judge = cast(LlmTargetSpec, self._agent_paths(spec, target or index))
                if judge.name != name:
                    judge = judge.model_copy(update={"name": name})
                self.selection.judges[name] = judge

    def _quiet_resolve(self, name: str) -> int | None:
        issues = len(self.selection.run_issues)
        index = self._resolve(name, ())
        del self.selection.run_issues[issues:]
        return index

    def _default_target(self) -> None:
        if "default" in self.by_name:  # AgentV's fallback when a suite names no target
            slug = self.select("default", ())
            if slug:
                self.selection.default_agents.append(slug)
            return
        specs: list[CatalogEntry] = [
            s
            for s in self.catalog.specs
            if s.name in self.by_name and not isinstance(s, LlmTarget | DelegateTarget)
        ]
        runnable: list[CatalogEntry] = [
            s for s in specs if not isinstance(s, InvalidTarget | UnsupportedTarget)
        ]
        specs = runnable or specs  # only targets that cannot run: say why the one cannot
        if len(specs) == 1:
            slug = self.select(specs[0].name, ())
            if slug:
                self.selection.default_agents.append(slug)
            return
        if len(specs) > 1:
            names = [s.name for s in specs]
            self._run_issue(
                self._suite_position(("execution",)),
                f"the suite does not say which target to run; {self.catalog.describe()}",
                f"add 'execution: {{target: {names[0]}}}', or 'targets: [{', '.join(names)}]' "
                "under execution: to run several",
            )


def select_targets(suite: EvalSuite, suite_doc: YamlDocument, catalog: TargetCatalog) -> Selection:
    """The targets the suite runs: its execution.target(s), else AgentV's default."""
    if not catalog.specs and catalog.inline:
        return Selection(issues=[no_targets_issue(suite_doc)])
    if not catalog.specs:
        issue = SuiteIssue(
            catalog.doc.file, 1, 1, "the targets file defines no targets", NO_TARGETS_FIX
        )
        return Selection(issues=[issue])
    return _Selector(suite, suite_doc, catalog).run()


def test_agents(test: TestSpec, run_targets: Mapping[str, str]) -> list[str]:
    """The agents `test` runs on, as AgentV 4.42.4 picks them (run-eval.ts): every target of
    the run (`run_targets`: names as the suite or `--target` writes them → agent); with several,
    only those its `execution.targets` names, none when it names none of them.

    A test's `execution.target` is never read, and with one target every test runs on it,
    whatever its `execution.targets` says.
    """
    listed = test.execution.target_names() if test.execution else []
    if len(run_targets) > 1 and listed:
        return list(dict.fromkeys(agent for name, agent in run_targets.items() if name in listed))
    return list(dict.fromkeys(run_targets.values()))


def test_target_warnings(suite: EvalSuite, suite_doc: YamlDocument) -> list[SuiteIssue]:
    """Warnings for what a test's `execution:` says about targets that AgentV 4.42.4 does not
    act on: its `target` (never read, even an undefined name), `targets` entries that are not
    names, and, when the suite runs several targets, names it does not run (dropped; a test
    naming none of them runs nowhere)."""
    suite_names = _suite_target_names(suite)
    return [
        warning
        for index, test in enumerate(suite.tests)
        for warning in _test_warnings(test, index, suite_names, suite_doc)
    ]


def _test_warnings(
    test: TestSpec, index: int, suite_names: list[str], suite_doc: YamlDocument
) -> list[SuiteIssue]:
    execution = test.execution
    if execution is None:
        return []
    warnings: list[SuiteIssue] = []
    at: DataPath = ("tests", index, "execution")

    def warn(path: DataPath, message: str, fix: str, *, key: bool = False) -> None:
        find = suite_doc.positions.key if key else suite_doc.positions.value
        mark = find((*at, *path))
        warnings.append(
            SuiteIssue(
                mark.file or suite_doc.file,
                mark.line,
                mark.column,
                f"test '{test.id}': {message}",
                fix,
            )
        )

    if execution.target is not None:
        warn(
            ("target",),
            "execution.target is ignored, as in AgentV 4.42.4 (the test runs on the run's targets)",
            "remove it; to run a test on only some targets, list the suite's targets under "
            "execution.targets and give the test 'execution: {targets: [NAME, ..]}'",
            key=True,
        )
    for entry, target in enumerate(execution.targets or []):
        if not isinstance(target, str):
            warn(
                ("targets", entry),
                f"execution.targets[{entry}] is not a target name and is ignored, as in "
                "AgentV 4.42.4",
                f"write the name alone: '{target.name}' (hooks and use_target belong in "
                "the suite's execution.targets)",
            )
    listed = execution.target_names()
    unknown = [name for name in listed if name not in suite_names]
    if len(suite_names) < 2 or not unknown:
        return warnings  # one target: every test runs on it, whatever it names
    runs = ", ".join(suite_names)
    if len(unknown) == len(listed):
        warn(
            ("targets",),
            f"execution.targets names none of the suite's targets ({runs}): the test runs "
            "on no target, as in AgentV 4.42.4",
            "name some of the suite's targets (as the suite names them), or remove "
            "execution.targets to run the test on all of them",
        )
    else:
        names = ", ".join(f"'{name}'" for name in unknown)
        warn(
            ("targets",),
            f"execution.targets names {names}, not among the suite's targets ({runs}); "
            "ignored, as in AgentV 4.42.4",
            "name the suite's targets as the suite names them, or add the target to the "
            "suite's execution.targets",
        )
    return warnings


def _suite_target_names(suite: EvalSuite) -> list[str]:
    """The target names the suite's own `execution` lists, as it writes them."""
    execution = suite.execution
    names = [t if isinstance(t, str) else t.name for t in execution.targets or []]
    if execution.target and execution.target not in names:
        names.insert(0, execution.target)
    return names


def no_targets_issue(suite_doc: YamlDocument) -> SuiteIssue:
    """The error for a suite whose inline `targets:` defines none."""
    mark = suite_doc.positions.value(("targets",))
    return SuiteIssue(
        suite_doc.file, mark.line, mark.column, "the suite's targets: list is empty", NO_TARGETS_FIX
    )


def judging_issues(
    suite: EvalSuite, suite_doc: YamlDocument, judges: dict[str, LlmTargetSpec]
) -> list[SuiteIssue]:
    """Panel members of `judging:` that are not LLM targets, and a missing calibration file."""
    if suite.judging is None:
        return []
    issues: list[SuiteIssue] = []
    calibration = suite.judging.calibration
    if calibration and not is_file(absolute(calibration, Path(suite_doc.file).parent)):
        mark = suite_doc.positions.value(("judging", "calibration"))
        issues.append(
            SuiteIssue(
                suite_doc.file,
                mark.line,
                mark.column,
                f"calibration file '{calibration}' not found",
                "give a CSV, JSONL or YAML file of human labels, relative to the eval file "
                "(see docs/judging.md)",
            )
        )
    for index, name in enumerate(suite.judging.panel):
        if name in judges:
            continue
        mark = suite_doc.positions.value(("judging", "panel", index))
        close = difflib.get_close_matches(name, list(judges), n=1, cutoff=0.6)
        defined = ", ".join(judges) or "none"
        issues.append(
            SuiteIssue(
                suite_doc.file,
                mark.line,
                mark.column,
                f"judge '{name}' is not an LLM target (LLM targets: {defined})",
                f"did you mean '{close[0]}'?"
                if close
                else "define it under targets: with provider: anthropic or openai and a model",
            )
        )
    return issues
