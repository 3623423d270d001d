"""Older AgentV spellings rewritten to the canonical form, on the raw data before validation.

The rewrite happens before pydantic sees the data so that the discriminated assertion union
gets a kebab-case `type`, and so that each deprecated spelling can be warned about at its line.
Positions move with the keys, so later errors still point at what the user wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals_pipeline.models.assertions import (
    ASSERTION_TYPES,
    LLM_GRADER_TYPES,
    normalize_assertion_type,
)
from evals_pipeline.suites.agentv_compat import SKIPPED_JUDGE_TYPES
from evals_pipeline.suites.composite_members import MEMBER_IGNORED_KEYS, member_problem
from evals_pipeline.suites.custom_types import RunnerMissing, find_custom_grader, grader_command
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.includes import (
    IncludeError,
    expand_includes,
    include_roots,
    is_include,
)
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument


class _Rewriter:
    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.warnings: list[SuiteIssue] = []
        self.issues: list[SuiteIssue] = []

    def _at(self, path: DataPath, message: str, fix: str) -> SuiteIssue:
        mark = self.doc.positions.key(path)
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, message, fix)

    def rename(self, mapping: dict[str, Any], path: DataPath, old: str, new: str) -> None:
        """Rename a deprecated key in place, with a warning; with both set, the new one wins
        and the old one is dropped (AgentV reads `new ?? old`)."""
        if old not in mapping:
            return
        where = ".".join(str(p) for p in path) or "the top level"
        if new in mapping:
            self.warnings.append(
                self._at(
                    (*path, old),
                    f"both '{new}' and its deprecated alias '{old}' are set in {where}; "
                    f"'{old}' is ignored",
                    f"keep only '{new}'",
                )
            )
            del mapping[old]
            return
        mapping[new] = mapping.pop(old)
        self.doc.positions.move((*path, old), (*path, new))
        self.warnings.append(
            self._at((*path, new), f"'{old}' is deprecated", f"rename it to '{new}'")
        )

    def camel(self, mapping: Any, path: DataPath, old: str, new: str) -> None:
        """Accept a camelCase spelling AgentV's schema allows, silently (AgentV does)."""
        if isinstance(mapping, dict) and old in mapping:
            if new in mapping:
                self.rename(mapping, path, old, new)  # both set: reported as an error
                return
            mapping[new] = mapping.pop(old)
            self.doc.positions.move((*path, old), (*path, new))

    def ignore(self, mapping: dict[str, Any], path: DataPath, key: str, message: str) -> None:
        """Drop a deprecated key AgentV 4.42.4 no longer acts on, with a warning."""
        if key in mapping:
            self.warnings.append(self._at((*path, key), message, f"remove '{key}'"))
            del mapping[key]

    def suite(self, data: dict[str, Any]) -> None:
        for old in ("eval_cases", "evalcases"):
            self.rename(data, (), old, "tests")
        self.rename(data, (), "assert", "assertions")
        self.ignore(data, (), "evaluator", EVALUATOR_IGNORED)
        self.ignore(
            data,
            (),
            "evaluators",
            "top-level 'evaluators' is ignored, as AgentV 4.42.4 ignores it; suite-level "
            "graders go under 'assertions'",
        )
        self._top_level_target(data)
        self._legacy_execution_graders(data)
        self.execution(data.get("execution"), ("execution",))
        self.workspace(data.get("workspace"), ("workspace",))
        self.target_list(data)
        self.assertion_list(data, ("assertions",))
        tests = data.get("tests")
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                if isinstance(test, dict):
                    at: DataPath = ("tests", index)
                    for old in ("evaluators", "assert"):
                        self.rename(test, at, old, "assertions")
                    self.rename(test, at, "expected_outcome", "criteria")
                    self.ignore(test, at, "evaluator", EVALUATOR_IGNORED)
                    self._test_rubrics(test, at)
                    self.execution(test.get("execution"), (*at, "execution"))
                    self.workspace(test.get("workspace"), (*at, "workspace"))
                    self.assertion_list(test, (*at, "assertions"))

    def _test_rubrics(self, test: dict[str, Any], at: DataPath) -> None:
        """A test's `rubrics:` list, as AgentV 4.42.4 reads it (parseInlineRubrics): one
        llm-grader named `rubrics`, first among the test's graders."""
        rubrics = test.get("rubrics")
        if not isinstance(rubrics, list):
            return  # validation says what `rubrics` must be
        del test["rubrics"]
        items = [item for item in rubrics if isinstance(item, str | dict)]
        criteria = [
            {"id": f"rubric-{index}", "outcome": item}
            if isinstance(item, str)
            else {"id": f"rubric-{index}", **item}
            for index, item in enumerate(items, 1)
        ]
        criteria = [c for c in criteria if c.get("outcome") or c.get("score_ranges")]
        self.warnings.append(
            self._at(
                (*at, "rubrics"),
                f"a test's 'rubrics' runs as an llm-grader named 'rubrics' ({len(criteria)} "
                "criteria), as AgentV 4.42.4 runs it",
                "write it as '- type: llm-grader' with 'rubrics: [...]' under assertions",
            )
        )
        if not criteria:
            return  # AgentV adds no grader without a criterion
        grader = {"type": "llm-grader", "name": "rubrics", "rubrics": criteria}
        assertions = test.get("assertions")
        path = (*at, "assertions")
        if isinstance(assertions, list):
            assertions.insert(0, grader)
            self._reindex(path, [-1, *range(len(assertions) - 1)])
        elif assertions is None:
            test["assertions"] = [grader]
        else:
            return  # validation reports the malformed list
        self.doc.positions.alias((*at, "rubrics"), (*path, 0))
        if assertions is None:
            self.doc.positions.alias((*at, "rubrics"), path)

    def execution(self, execution: Any, path: DataPath) -> None:
        if not isinstance(execution, dict):
            return
        self.camel(execution, path, "budgetUsd", "budget_usd")
        self.camel(execution, path, "failOnError", "fail_on_error")
        self.rename(execution, path, "evaluators", "assertions")
        self.camel(execution.get("trials"), (*path, "trials"), "costLimitUsd", "cost_limit_usd")
        targets = execution.get("targets")
        if isinstance(targets, list):
            for index, ref in enumerate(targets):
                if isinstance(ref, dict):
                    self.hooks(ref.get("hooks"), (*path, "targets", index, "hooks"))

    def workspace(self, workspace: Any, path: DataPath) -> None:
        if isinstance(workspace, dict):
            self.hooks(workspace.get("hooks"), (*path, "hooks"))

    def hooks(self, hooks: Any, path: DataPath) -> None:
        if not isinstance(hooks, dict):
            return
        for name in ("before_all", "before_each", "after_each", "after_all"):
            hook = hooks.get(name)
            if isinstance(hook, dict):
                self.camel(hook, (*path, name), "timeoutMs", "timeout_ms")
                self.rename(hook, (*path, name), "script", "command")

    def _top_level_target(self, data: dict[str, Any]) -> None:
        if "target" not in data:
            return
        execution = data.get("execution")
        if execution is None:
            execution = data["execution"] = {}
            self.doc.positions.alias(("target",), ("execution",))
        if not isinstance(execution, dict):
            return  # validation reports the malformed execution block
        if "target" in execution:  # AgentV reads execution.target ?? target
            self.warnings.append(
                self._at(
                    ("target",),
                    "both 'target' and 'execution.target' are set; 'target' is ignored",
                    "keep only execution.target",
                )
            )
            del data["target"]
            return
        execution["target"] = data.pop("target")
        self.doc.positions.move(("target",), ("execution", "target"))
        self.warnings.append(
            self._at(
                ("execution", "target"),
                "top-level 'target' is deprecated",
                "move it under execution: as execution.target",
            )
        )

    def _legacy_execution_graders(self, data: dict[str, Any]) -> None:
        execution = data.get("execution")
        if not isinstance(execution, dict):
            return
        for old in ("evaluators", "assertions"):
            graders = execution.get(old)
            if not isinstance(graders, list):
                continue
            existing = data.get("assertions")
            at: DataPath
            if existing is None:
                data["assertions"] = execution.pop(old)
                self.doc.positions.move(("execution", old), ("assertions",))
                at = ("assertions",)
            elif isinstance(existing, list):
                offset = len(existing)
                existing.extend(execution.pop(old))
                self.doc.positions.move(("execution", old), ("assertions",), index_offset=offset)
                at = ("assertions", offset)
            else:
                continue
            self.warnings.append(
                self._at(
                    at,
                    f"'execution.{old}' is a deprecated place for suite-level assertions",
                    "move the list to the top-level 'assertions:'",
                )
            )

    def assertion_list(self, owner: dict[str, Any], path: DataPath) -> None:
        """Bring an assertion list to the canonical form, as AgentV 4.42.4 reads it.

        Includes are spliced in, plain sentences become one `rubrics` grader, deprecated
        judge types are dropped with a warning (AgentV skips them), and each remaining entry
        gets its canonical spelling; composite members are rewritten the same way.
        """
        key = str(path[-1])
        assertions = owner.get(key)
        if key in owner and assertions is None:
            # `assertions:` with nothing after it: AgentV warns and reads no graders there.
            self.warnings.append(
                self._at(
                    path,
                    f"'{key}' is empty: no graders here, as AgentV 4.42.4 reads it",
                    f"write {key}: [] (or remove the key)",
                )
            )
            owner[key] = []
            return
        if not isinstance(assertions, list):
            return
        entries = self._expand_includes(assertions, path)
        if entries is None:
            return
        written = len(entries)
        entries = self._sentences(entries, path)
        kept: list[tuple[Any, int]] = []
        for entry, index in entries:
            if not isinstance(entry, dict) or self.assertion(entry, (*path, index)):
                kept.append((entry, index))
        owner[key] = [entry for entry, _ in kept]
        origins = [index for _, index in kept]
        if origins != list(range(written)):  # re-filing scans every position: only on change
            self._reindex(path, origins)

    def _expand_includes(
        self, assertions: list[Any], path: DataPath
    ) -> list[tuple[Any, int]] | None:
        """The entries with includes spliced in, each with the index its position comes from."""
        if not any(is_include(entry) for entry in assertions):
            return list(zip(assertions, range(len(assertions)), strict=True))
        try:
            expansion = expand_includes(assertions, include_roots(Path(self.doc.file)))
        except IncludeError as exc:
            index = next(i for i, entry in enumerate(assertions) if is_include(entry))
            self.issues.append(self._at((*path, index, "include"), str(exc), exc.fix))
            kept = [i for i, entry in enumerate(assertions) if not is_include(entry)]
            assertions[:] = [assertions[i] for i in kept]  # reported: not "unknown" as well
            self._reindex(path, kept)
            return None
        # Spliced entries point at their include line: give each its own position slot first.
        assertions[:] = expansion.entries
        self._reindex(path, expansion.origins)
        return list(zip(expansion.entries, range(len(expansion.entries)), strict=True))

    def _sentences(self, entries: list[tuple[Any, int]], path: DataPath) -> list[tuple[Any, int]]:
        """Plain strings become one `rubrics` grader at the first string's place (AgentV)."""
        strings = [(entry, index) for entry, index in entries if isinstance(entry, str)]
        if not strings:
            return entries
        criteria: list[str] = []
        for text, index in strings:
            if text.strip():
                criteria.append(text.strip())
            else:
                self.warnings.append(
                    self._at((*path, index), "empty plain-sentence assertion", "remove it")
                )
        first = strings[0][1]
        result: list[tuple[Any, int]] = []
        for entry, index in entries:
            if index == first and criteria:
                rubric = {"type": "rubrics", "criteria": criteria, "weight": len(criteria)}
                result.append((rubric, index))
                written = [at for text, at in strings if text.strip()]
                for position, at in enumerate(written):
                    self.doc.positions.alias((*path, at), (*path, index, "criteria", position))
                self.warnings.append(
                    self._at(
                        (*path, index),
                        f"{len(criteria)} plain-sentence assertion(s) run as one 'rubrics' "
                        f"grader (weight {len(criteria)}) judged by the grader target",
                        "write them as '- type: rubrics' with 'criteria: [...]' to say so",
                    )
                )
            elif not isinstance(entry, str):
                result.append((entry, index))
        return result

    def _reindex(self, path: DataPath, origins: list[int]) -> None:
        """Re-file the positions under a list whose items now come from `origins` (old indexes)."""
        positions = self.doc.positions
        depth = len(path)
        saved: list[dict[DataPath, Any]] = []
        for table in (positions.keys, positions.values):
            under = {
                p: table.pop(p)
                for p in list(table)
                if len(p) > depth and p[:depth] == path and isinstance(p[depth], int)
            }
            saved.append(under)
        for table, under in zip((positions.keys, positions.values), saved, strict=True):
            for new_index, old_index in enumerate(origins):
                for old_path, mark in under.items():
                    if old_path[depth] == old_index:
                        table[(*path, new_index, *old_path[depth + 1 :])] = mark

    def assertion(self, assertion: dict[str, Any], path: DataPath) -> bool:
        """Rewrite one assertion in place; False when AgentV would skip it (then it goes)."""
        written = kind = assertion.get("type")
        if isinstance(kind, str):
            kind = assertion["type"] = normalize_assertion_type(kind)
        if kind in SKIPPED_JUDGE_TYPES:
            name = assertion.get("name") or "<unnamed>"
            self.warnings.append(
                self._at(
                    (*path, "type"),
                    f"assertion '{name}' of type '{written}' is skipped: AgentV 4.42.4 skips this "
                    "deprecated type, so it never grades",
                    f"write type: {SKIPPED_JUDGE_TYPES[kind]} (and command: for script:) to run it",
                )
            )
            return False
        if kind == "rubric":
            self._rubric(assertion, path)
        elif kind == "inline-assert":
            self._inline_assert(assertion, path)
        elif kind == "code-grader":
            self.rename(assertion, path, "script", "command")
        elif kind == "composite":
            if not self._composite(assertion, path):
                return False
        elif kind == "tool-trajectory":
            self._trajectory(assertion, path)
        elif isinstance(kind, str) and kind not in ASSERTION_TYPES:
            self._custom(assertion, path, kind)
        for old, new in CAMEL_CASE_KEYS.get(str(kind), {}).items():
            self.rename(assertion, path, old, new)
        if kind in LLM_GRADER_TYPES and "max_steps" in assertion:
            self.warnings.append(
                self._at(
                    (*path, "max_steps"),
                    "max_steps has no effect: AgentV 4.42.4 uses it only for its built-in grader "
                    "agent (a grader target with provider: agentv, which evals-pipeline does not "
                    "run) and ignores it for every other grader target, as here",
                    "remove max_steps",
                )
            )
        return True

    def _rubric(self, assertion: dict[str, Any], path: DataPath) -> None:
        assertion["type"] = "rubrics"
        self.warnings.append(
            self._at(
                (*path, "type"),
                "assertion type 'rubric' is deprecated",
                "write type: rubrics and rename its 'rubrics:' list to 'criteria:'",
            )
        )
        if "rubrics" in assertion and "criteria" not in assertion:
            assertion["criteria"] = assertion.pop("rubrics")
            self.doc.positions.move((*path, "rubrics"), (*path, "criteria"))

    def _inline_assert(self, assertion: dict[str, Any], path: DataPath) -> None:
        # AgentV's YAML loader has no function to call: the entry falls through to llm-grader.
        assertion["type"] = "llm-grader"
        assertion.setdefault("name", "inline-assert")
        self.warnings.append(
            self._at(
                (*path, "type"),
                "'inline-assert' takes a TypeScript function and exists only in AgentV's SDK; "
                "in YAML AgentV 4.42.4 runs it as an llm-grader, and so does evals-pipeline",
                "write type: llm-grader (or a code-grader for a programmatic check)",
            )
        )

    def _trajectory(self, assertion: dict[str, Any], path: DataPath) -> None:
        expected = assertion.get("expected")
        if not isinstance(expected, list):
            return
        for index, step in enumerate(expected):
            if not isinstance(step, dict):
                continue
            at = (*path, "expected", index)
            for old, new in CAMEL_CASE_KEYS["tool-trajectory"].items():
                self.rename(step, at, old, new)
            for key in ("input", "output"):
                if key in step:
                    self.warnings.append(
                        self._at(
                            (*at, key),
                            f"expected[].{key} is not checked: AgentV 4.42.4 ignores it",
                            "check arguments with 'args:' (and args_match); results with a "
                            "code-grader",
                        )
                    )

    def _composite(self, assertion: dict[str, Any], path: DataPath) -> bool:
        """Rewrite a composite and its members; the members AgentV 4.42.4 skips go, with a
        warning each. False when none is left (AgentV skips the composite, and so does this)."""
        for old in ("evaluators", "assert"):
            self.rename(assertion, path, old, "assertions")
        members = assertion.get("assertions")
        if not isinstance(members, list):
            return True
        written = len(members)
        at = (*path, "assertions")
        self._drop_members(members, at, [member_problem(member) for member in members])
        self.assertion_list(assertion, at)
        left = assertion.get("assertions", [])
        self._drop_members(
            left,
            at,
            [
                (
                    "a composite member without a name is skipped, as AgentV 4.42.4 skips it",
                    "add 'name: <member name>' (aggregator weights refer to it)",
                )
                if isinstance(member, dict)
                and not (isinstance(member.get("name"), str) and member["name"])
                else None
                for member in left
            ],
        )
        if written and not left:
            name = assertion.get("name") or "<unnamed>"
            self.warnings.append(
                self._at(
                    (*path, "type"),
                    f"composite '{name}' is skipped: AgentV 4.42.4 skips each of its members, "
                    "so it has none left and never grades",
                    "write each member as a named, built-in, kebab-case type to run it",
                )
            )
            return False
        for index, member in enumerate(left):
            at = (*path, "assertions", index)
            if not isinstance(member, dict):
                continue
            for key in MEMBER_IGNORED_KEYS:
                if key in member:
                    del member[key]
                    self.warnings.append(
                        self._at(
                            (*at, key),
                            f"'{key}' does nothing on a composite member (AgentV 4.42.4 ignores "
                            "it), so it is ignored",
                            "weigh members with aggregator.weights; put negate, required and "
                            "min_score on the composite itself",
                        )
                    )
        aggregator = assertion.get("aggregator")
        if isinstance(aggregator, dict) and isinstance(aggregator.get("type"), str):
            kind = aggregator["type"]
            if kind not in ("weighted_average", "threshold"):
                aggregator["type"] = normalize_assertion_type(kind)
        return True

    def _drop_members(
        self, members: list[Any], path: DataPath, problems: list[tuple[str, str] | None]
    ) -> None:
        """Drop the members that have a problem (AgentV skips them), with a warning each."""
        kept = [index for index, problem in enumerate(problems) if problem is None]
        if len(kept) == len(members):
            return
        for index, problem in enumerate(problems):
            if problem is not None:
                self.warnings.append(self._at((*path, index), *problem))
        members[:] = [members[index] for index in kept]
        self._reindex(path, kept)

    def _custom(self, assertion: dict[str, Any], path: DataPath, kind: str) -> None:
        base_dir = Path(self.doc.file).parent
        file = find_custom_grader(kind, base_dir)
        if file is None:
            return  # validation reports the unknown type with the valid ones
        try:
            command = grader_command(file, base_dir)
        except RunnerMissing:
            # AgentV's own command: the check before a run says bun is missing, and makes the
            # tests it grades errors, as a code grader that cannot start.
            command = ["bun", "run", str(file)]
        assertion["type"] = "custom"
        assertion["custom_type"] = kind
        assertion["command"] = command
        assertion.setdefault("cwd", str(base_dir))

    def target_list(self, data: dict[str, Any]) -> None:
        """`command` for the cli target's older `command_template` (and the seed's camelCase)."""
        targets = data.get("targets")
        if not isinstance(targets, list):
            return
        for index, target in enumerate(targets):
            if isinstance(target, dict):
                for old in ("commandTemplate", "command_template"):
                    self.rename(target, ("targets", index), old, "command")


EVALUATOR_IGNORED = (
    "'evaluator' is deprecated and ignored: AgentV 4.42.4 reads it only to pick the grader "
    "of a test without assertions, which is an llm-grader here as there"
)

CAMEL_CASE_KEYS: dict[str, dict[str, str]] = {
    "llm-grader": {"maxSteps": "max_steps"},
    "tool-trajectory": {"argsMatch": "args_match", "maxDurationMs": "max_duration_ms"},
    "token-usage": {"maxTotal": "max_total", "maxInput": "max_input", "maxOutput": "max_output"},
    "execution-metrics": {
        "maxToolCalls": "max_tool_calls",
        "maxLlmCalls": "max_llm_calls",
        "maxTokens": "max_tokens",
        "maxCostUsd": "max_cost_usd",
        "maxDurationMs": "max_duration_ms",
        "targetExplorationRatio": "target_exploration_ratio",
        "explorationTolerance": "exploration_tolerance",
    },
}
"""camelCase keys AgentV 4.42.4's loader reads besides the snake_case ones, by type."""


def rewrite_target_aliases(doc: YamlDocument) -> tuple[list[SuiteIssue], list[SuiteIssue]]:
    """Rewrite deprecated spellings in a parsed targets file in place: (warnings, errors)."""
    rewriter = _Rewriter(doc)
    if isinstance(doc.data, dict):
        rewriter.target_list(doc.data)
    return rewriter.warnings, rewriter.issues


def rewrite_suite_aliases(doc: YamlDocument) -> tuple[list[SuiteIssue], list[SuiteIssue]]:
    """Rewrite deprecated spellings in a parsed suite in place: (warnings, errors)."""
    rewriter = _Rewriter(doc)
    if isinstance(doc.data, dict):
        rewriter.suite(doc.data)
    return rewriter.warnings, rewriter.issues
