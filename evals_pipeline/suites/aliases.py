"""Older AgentV spellings rewritten to the canonical form, on the raw data before validation.

The rewrite happens before pydantic sees the data so that the discriminated assertion union
gets a kebab-case `type`, and so that each deprecated spelling can be warned about at its line.
Positions move with the keys, so later errors still point at what the user wrote.
"""

from __future__ import annotations

from typing import Any

from evals_pipeline.models.assertions import normalize_assertion_type
from evals_pipeline.suites.agentv_compat import SKIPPED_JUDGE_TYPES
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument


class _Rewriter:
    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.warnings: list[SuiteIssue] = []
        self.issues: list[SuiteIssue] = []

    def _at(self, path: DataPath, message: str, fix: str) -> SuiteIssue:
        mark = self.doc.positions.key(path)
        return SuiteIssue(self.doc.file, mark.line, mark.column, message, fix)

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

    def suite(self, data: dict[str, Any]) -> None:
        for old in ("eval_cases", "evalcases"):
            self.rename(data, (), old, "tests")
        self.rename(data, (), "assert", "assertions")
        self._top_level_target(data)
        self._legacy_execution_graders(data)
        self.target_list(data)
        self.assertion_list(data, ("assertions",))
        tests = data.get("tests")
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                if isinstance(test, dict):
                    for old in ("evaluators", "assert"):
                        self.rename(test, ("tests", index), old, "assertions")
                    self.assertion_list(test, ("tests", index, "assertions"))

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
        """Normalise each assertion: kebab-case `type`, `command` for the old `script`; drop the
        `-judge` types with a warning, as AgentV 4.42.4 skips them."""
        assertions = owner.get(str(path[-1]))
        if not isinstance(assertions, list):
            return
        for index in reversed(range(len(assertions))):
            assertion = assertions[index]
            if not isinstance(assertion, dict):
                continue
            written = assertion.get("type")
            if "type" in assertion:
                assertion["type"] = normalize_assertion_type(written)
            if assertion.get("type") in SKIPPED_JUDGE_TYPES:
                new = SKIPPED_JUDGE_TYPES[assertion["type"]]
                name = assertion.get("name") or "<unnamed>"
                self.warnings.append(
                    self._at(
                        (*path, index, "type"),
                        f"assertion '{name}' of type '{written}' is skipped: AgentV 4.42.4 "
                        "skips this deprecated type, so it never grades",
                        f"write type: {new} (and command: for script:) to run it",
                    )
                )
                del assertions[index]
                self.doc.positions.remove_item(path, index)
                continue
            if assertion.get("type") == "code-grader":
                self.rename(assertion, (*path, index), "script", "command")

    def target_list(self, data: dict[str, Any]) -> None:
        """`command` for the cli target's older `command_template` (and the seed's camelCase)."""
        targets = data.get("targets")
        if not isinstance(targets, list):
            return
        for index, target in enumerate(targets):
            if isinstance(target, dict):
                for old in ("commandTemplate", "command_template"):
                    self.rename(target, ("targets", index), old, "command")


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
