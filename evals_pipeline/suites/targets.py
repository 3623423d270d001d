"""Targets: where a suite's agents are defined, which ones it selects, and their paths.

Inline `targets:` in the suite win; otherwise the nearest `.agentv/targets.yaml` walking up from
the eval file's folder. Relative paths in a target (`cwd`, `healthcheck.cwd`, `sessions_dir`,
`model_server.script`, an `executable` with a slash) resolve against the folder that owns the definition: the eval file's folder for inline targets,
the project folder holding `.agentv/` for a targets file. A cli command without `cwd` runs in the
eval file's folder (or the workspace), as in AgentV, so `cwd` is left unset then.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from evals_pipeline.models.suite import EvalSuite, TargetRef
from evals_pipeline.models.targets import (
    AgentTarget,
    CliTarget,
    LlmTarget,
    LlmTargetSpec,
    ReplayTarget,
    TargetsFile,
    TargetSpec,
)
from evals_pipeline.suites.aliases import rewrite_target_aliases
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.interpolation import interpolate
from evals_pipeline.suites.paths import absolute
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.validation import validate_document
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument, read_yaml_file

TARGETS_FILE_NAMES = ("targets.yaml", "targets.yml")

NO_TARGETS_FIX = """add a target to the suite (or to .agentv/targets.yaml next to it):
      targets:
        - name: my-agent
          provider: cli
          command: my-agent --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"""


@dataclass
class TargetCatalog:
    """The targets a suite may name, and the file (and data path) that defines them."""

    doc: YamlDocument
    specs: list[TargetSpec]
    base_dir: Path
    """Relative paths inside these targets resolve against this folder."""
    inline: bool
    warnings: list[SuiteIssue] = field(default_factory=list)
    """Deprecated spellings in a targets file, rewritten (inline targets warn with the suite)."""

    def position(self, index: int, *keys: str) -> SuiteIssue:
        """An issue skeleton at `targets[index].<keys>` in the defining file (message unset)."""
        mark = self.doc.positions.value(("targets", index, *keys))
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, "", "")

    def describe(self) -> str:
        names = ", ".join(spec.name for spec in self.specs) or "none"
        return f"defined targets: {names}" + ("" if self.inline else f" (in {self.doc.file})")


def find_targets_file(start_dir: Path) -> Path | None:
    """The nearest `.agentv/targets.yaml` in `start_dir` or one of its parents."""
    for folder in (start_dir, *start_dir.parents):
        for name in TARGETS_FILE_NAMES:
            candidate = folder / ".agentv" / name
            if candidate.is_file():
                return candidate
    return None


def load_targets_file(path: Path) -> TargetCatalog:
    """Parse and validate a targets file; errors point into that file."""
    doc = read_yaml_file(path)
    if doc.data is None:
        raise SuiteError([SuiteIssue(doc.file, 1, 1, "the targets file is empty", NO_TARGETS_FIX)])
    warnings, issues = rewrite_target_aliases(doc)
    if issues:
        raise SuiteError(issues)
    doc.data = interpolate(doc.data)
    parsed = validate_document(TargetsFile, doc)
    return TargetCatalog(
        doc=doc,
        specs=parsed.targets,
        base_dir=path.parent.parent,
        inline=False,
        warnings=warnings,
    )


@dataclass
class Selection:
    """The targets a suite runs: every selected target by agent slug, and the default agents."""

    targets: dict[str, TargetSpec] = field(default_factory=dict)
    default_agents: list[str] = field(default_factory=list)
    """Agents a test without its own `execution.target` runs on."""
    judges: dict[str, LlmTargetSpec] = field(default_factory=dict)
    """LLM targets by name: the judges a suite's graders and panel may name."""
    issues: list[SuiteIssue] = field(default_factory=list)


class _Selector:
    def __init__(self, suite: EvalSuite, suite_doc: YamlDocument, catalog: TargetCatalog) -> None:
        self.suite = suite
        self.suite_doc = suite_doc
        self.catalog = catalog
        self.selection = Selection()
        self.by_name: dict[str, int] = {}
        self._index_catalog()

    def _index_catalog(self) -> None:
        slugs: dict[str, str] = {}
        for index, spec in enumerate(self.catalog.specs):
            at = self.catalog.position(index, "name")
            if spec.name in self.by_name:
                first = self.catalog.position(self.by_name[spec.name], "name")
                self._issue(
                    at,
                    f"duplicate target name '{spec.name}' (first at line {first.line})",
                    "give each target a unique name",
                )
                continue
            try:
                slug = slugify(spec.name)
            except ValueError:
                self._issue(
                    at,
                    f"target name {spec.name!r} has no letters or digits",
                    "name the target with letters, digits and '-'",
                )
                continue
            if slug in slugs:
                self._issue(
                    at,
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

    def _suite_position(self, path: DataPath) -> SuiteIssue:
        mark = self.suite_doc.positions.value(path)
        return SuiteIssue(mark.file or self.suite_doc.file, mark.line, mark.column, "", "")

    def select(self, name: str, path: DataPath, use_target: str | None = None) -> str | None:
        """Add the target `name` (defined as `use_target`, if given); its agent slug, or None."""
        try:
            slug = slugify(name)
        except ValueError:
            self._issue(
                self._suite_position(path),
                f"target name {name!r} has no letters or digits",
                "name a target with letters, digits and '-'",
            )
            return None
        if use_target is None and slug in self.selection.targets:
            return slug  # e.g. a test naming a matrix entry `{name, use_target}`
        defined_as = use_target or name
        if defined_as not in self.by_name:
            close = difflib.get_close_matches(defined_as, list(self.by_name), n=1, cutoff=0.6)
            where = "targets: in the suite" if self.catalog.inline else self.catalog.doc.file
            self._issue(
                self._suite_position(path),
                f"target '{defined_as}' is not defined; {self.catalog.describe()}",
                f"did you mean '{close[0]}'?" if close else f"define it in {where}",
            )
            return None
        index = self.by_name[defined_as]
        if isinstance(self.catalog.specs[index], LlmTarget):
            self._issue(
                self._suite_position(path),
                f"target '{defined_as}' is an LLM (provider "
                f"{self.catalog.specs[index].provider}): it can judge but not run as an agent",
                "run agents through claude-code, codex, pi-agent or cli targets; name LLM "
                "targets in judging.panel, an agent's grader_target or an llm-grader's target",
            )
            return None
        if slug not in self.selection.targets:
            self._check_grader_target(index)
            spec = self._with_absolute_paths(self.catalog.specs[index], index)
            if spec.name != name:
                spec = spec.model_copy(update={"name": name})
            self.selection.targets[slug] = spec
        return slug

    def _with_absolute_paths(self, spec: TargetSpec, index: int) -> TargetSpec:
        base = self.catalog.base_dir
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
            sessions = absolute(spec.sessions_dir, base)
            self._require_dir(sessions, index, "sessions_dir", spec.sessions_dir)
            return spec.model_copy(update={"sessions_dir": str(sessions)})
        if isinstance(spec, AgentTarget):
            return cast(TargetSpec, self._agent_paths(spec, index))
        return spec

    def _agent_paths(self, spec: AgentTarget | LlmTarget, index: int) -> AgentTarget | LlmTarget:
        base = self.catalog.base_dir
        update: dict[str, object] = {}
        if isinstance(spec, AgentTarget) and spec.executable and "/" in spec.executable:
            update["executable"] = str(absolute(spec.executable, base))
        if spec.model_server:
            script = absolute(spec.model_server.script, base)
            # With {EVAL_ID} each test has its own script; the adapter checks it per run.
            expected = script.parent if "{EVAL_ID}" in script.name else script
            if not expected.exists():
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
        if folder.is_dir():
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
            slug = self.select(ref.name, at, ref.use_target)
            if slug and slug not in self.selection.default_agents:
                self.selection.default_agents.append(slug)

        per_test = [
            (index, test.execution.target)
            for index, test in enumerate(self.suite.tests)
            if test.execution and test.execution.target
        ]
        for index, name in per_test:
            self.select(name, ("tests", index, "execution", "target"))

        if not requested and len(per_test) < len(self.suite.tests):
            self._default_target()
        self._index_judges()
        return self.selection

    def _check_grader_target(self, index: int) -> None:
        wanted = self.catalog.specs[index].grader_target
        if wanted is None:
            return
        if wanted in self.by_name and isinstance(
            self.catalog.specs[self.by_name[wanted]], LlmTarget
        ):
            return
        self._issue(
            self.catalog.position(index, "grader_target"),
            f"grader_target '{wanted}' is not an LLM target; {self.catalog.describe()}",
            "define a target with provider: anthropic or openai and a model, and name it here",
        )

    def _index_judges(self) -> None:
        """Every LLM target of the catalog, paths absolute: the judges graders may name."""
        for name, index in self.by_name.items():
            spec = self.catalog.specs[index]
            if isinstance(spec, LlmTarget):
                self.selection.judges[name] = cast(LlmTargetSpec, self._agent_paths(spec, index))

    def _default_target(self) -> None:
        specs = [
            s for s in self.catalog.specs if s.name in self.by_name and not isinstance(s, LlmTarget)
        ]
        if len(specs) == 1:
            slug = self.select(specs[0].name, ())
            if slug:
                self.selection.default_agents.append(slug)
            return
        if len(specs) > 1:
            names = [s.name for s in specs]
            self._issue(
                self._suite_position(("execution",)),
                f"the suite does not say which target to run; {self.catalog.describe()}",
                f"add 'execution: {{target: {names[0]}}}', or 'targets: [{', '.join(names)}]' "
                "under execution: to run several",
            )


def select_targets(suite: EvalSuite, suite_doc: YamlDocument, catalog: TargetCatalog) -> Selection:
    """The targets the suite runs, from execution.target(s), per-test targets, or the only one."""
    if not catalog.specs and catalog.inline:
        return Selection(issues=[no_targets_issue(suite_doc)])
    if not catalog.specs:
        issue = SuiteIssue(
            catalog.doc.file, 1, 1, "the targets file defines no targets", NO_TARGETS_FIX
        )
        return Selection(issues=[issue])
    return _Selector(suite, suite_doc, catalog).run()


def no_targets_issue(suite_doc: YamlDocument) -> SuiteIssue:
    """The error for a suite with no inline targets and no targets file to find."""
    mark = suite_doc.positions.value(("execution", "target"))
    folder = Path(suite_doc.file).parent
    return SuiteIssue(
        suite_doc.file,
        mark.line,
        mark.column,
        "no targets defined: the suite has no 'targets:' and there is no .agentv/targets.yaml "
        f"in {folder} or its parents",
        NO_TARGETS_FIX,
    )


def judging_issues(
    suite: EvalSuite, suite_doc: YamlDocument, judges: dict[str, LlmTargetSpec]
) -> list[SuiteIssue]:
    """Panel members of `judging:` that are not LLM targets, and a missing calibration file."""
    if suite.judging is None:
        return []
    issues: list[SuiteIssue] = []
    calibration = suite.judging.calibration
    if calibration and not absolute(calibration, Path(suite_doc.file).parent).is_file():
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
