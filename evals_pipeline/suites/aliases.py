"""Older AgentV spellings rewritten to the canonical form, on the raw data before validation.

The rewrite happens before pydantic sees the data so that the discriminated assertion union
gets a kebab-case `type`, and so that each deprecated spelling can be warned about at its line.
Positions move with the keys, so later errors still point at what the user wrote.
"""

from __future__ import annotations

from typing import Any

from evals_pipeline.models.assertions import normalize_assertion_type
from evals_pipeline.suites.errors import SuiteIssue
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
        """Rename a deprecated key in place, with a warning (an error if both are set)."""
        if old not in mapping:
            return
        where = ".".join(str(p) for p in path) or "the top level"
        if new in mapping:
            self.issues.append(
                self._at(
                    (*path, old),
                    f"both '{new}' and its deprecated alias '{old}' are set in {where}",
                    f"keep only '{new}'",
                )
            )
            del mapping[old]  # reported here; validation need not call it unknown
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

    def suite(self, data: dict[str, Any]) -> None:
        for old in ("eval_cases", "evalcases"):
            self.rename(data, (), old, "tests")
        self.rename(data, (), "assert", "assertions")
        self._top_level_target(data)
        self._legacy_execution_graders(data)
        self.execution(data.get("execution"), ("execution",))
        self.workspace(data.get("workspace"), ("workspace",))
        self.assertion_list(data, ("assertions",))
        tests = data.get("tests")
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                if isinstance(test, dict):
                    at: DataPath = ("tests", index)
                    for old in ("evaluators", "assert"):
                        self.rename(test, at, old, "assertions")
                    self.rename(test, at, "expected_outcome", "criteria")
                    self.execution(test.get("execution"), (*at, "execution"))
                    self.workspace(test.get("workspace"), (*at, "workspace"))
                    self.assertion_list(test, (*at, "assertions"))

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
        if "target" in execution:
            self.issues.append(
                self._at(
                    ("target",),
                    "both 'target' and 'execution.target' are set",
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
        """Normalise each assertion: kebab-case `type`, `command` for the old `script`."""
        assertions = owner.get(str(path[-1]))
        if not isinstance(assertions, list):
            return
        for index, assertion in enumerate(assertions):
            if not isinstance(assertion, dict):
                continue
            if "type" in assertion:
                assertion["type"] = normalize_assertion_type(assertion["type"])
            if assertion.get("type") == "code-grader":
                self.rename(assertion, (*path, index), "script", "command")


def rewrite_suite_aliases(doc: YamlDocument) -> tuple[list[SuiteIssue], list[SuiteIssue]]:
    """Rewrite deprecated spellings in a parsed suite in place: (warnings, errors)."""
    rewriter = _Rewriter(doc)
    if isinstance(doc.data, dict):
        rewriter.suite(doc.data)
    return rewriter.warnings, rewriter.issues
