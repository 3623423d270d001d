"""Agent Skills `evals.json` files read as suites, mapped as AgentV 4.42.4 maps them
(loaders/agent-skills-parser.ts): AgentV runs any `.json` eval file in this format.

Each case of `evals` becomes a test: `id` as text, `prompt` the user input, `expected_output`
the expected answer and the criteria, each `assertions` string an llm-grader named
`assertion-<n>` with that string as its prompt, `skill_name` and `files` in the metadata. The
`files` (relative to the file's folder) reach `{FILES}` and the graders' `input_files` but not
the prompt, as in AgentV. A case with neither assertions nor expected_output is judged by the
default llm-grader all the same.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from evals_pipeline.models.suite import EvalSuite
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.probes import exists
from evals_pipeline.suites.yaml_positions import DataPath, Positions, YamlDocument, read_yaml_file

FILES_KEY = "agent_skills_files"
BASE_DIR_KEY = "agent_skills_base_dir"
_SKILL_NAME = re.compile(r"[a-z0-9-]+")


def is_agent_skills_file(path: Path) -> bool:
    """Whether AgentV reads this eval file as Agent Skills JSON: any `.json` file."""
    return path.suffix.lower() == ".json"


def agent_skills_suite(file: Path) -> tuple[YamlDocument, list[SuiteIssue], list[SuiteIssue]]:
    """The file as a suite document, positions kept: `(doc, warnings, errors)`."""
    source = read_yaml_file(file)  # JSON is YAML: one parser, the same located syntax errors
    return _Mapper(source, file.parent).suite()


def attached_files(suite: EvalSuite) -> dict[str, list[str]]:
    """Test id → the absolute paths of its Agent Skills `files` (AgentV's `file_paths`)."""
    attached: dict[str, list[str]] = {}
    for test in suite.tests:
        metadata = test.metadata or {}
        files, base = metadata.get(FILES_KEY), metadata.get(BASE_DIR_KEY)
        if isinstance(files, list) and isinstance(base, str):
            attached[test.id] = [os.path.normpath(os.path.join(base, f)) for f in files]
    return attached


class _Mapper:
    def __init__(self, source: YamlDocument, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.positions = Positions()
        self.warnings: list[SuiteIssue] = []
        self.errors: list[SuiteIssue] = []

    def issue(self, path: DataPath, message: str, fix: str) -> SuiteIssue:
        mark = self.source.positions.value(path)
        return SuiteIssue(self.source.file, mark.line, mark.column, message, fix)

    def place(self, new: DataPath, old: DataPath) -> None:
        """Report problems at `new` where the user wrote `old`, and everything under it."""
        for mine, theirs in (
            (self.positions.keys, self.source.positions.keys),
            (self.positions.values, self.source.positions.values),
        ):
            for path, mark in theirs.items():
                if path[: len(old)] == old:
                    mine[new + path[len(old) :]] = mark

    def suite(self) -> tuple[YamlDocument, list[SuiteIssue], list[SuiteIssue]]:
        data = self.source.data
        evals = data.get("evals") if isinstance(data, dict) else None
        doc = YamlDocument(file=self.source.file, data={}, positions=self.positions)
        if not isinstance(evals, list) or not evals:
            problem = "an empty 'evals' array" if isinstance(evals, list) else "no 'evals' array"
            self.errors.append(
                self.issue(
                    ("evals",) if isinstance(evals, list) else (),
                    f"an Agent Skills evals.json needs at least one case; this file has {problem}",
                    'write {"skill_name": "my-skill", "evals": [{"id": 1, "prompt": "..."}]}, '
                    "or name a YAML eval file instead",
                )
            )
            return doc, [], self.errors
        assert isinstance(data, dict)
        self.place((), ())
        self.place(("tests",), ("evals",))
        skill = data.get("skill_name")
        tests: list[dict[str, Any]] = []
        for index, case in enumerate(evals):
            test = self.test(case, index, ("tests", len(tests)), skill)
            if test is not None:
                tests.append(test)
        doc.data["tests"] = tests
        if isinstance(skill, str) and _SKILL_NAME.fullmatch(skill):
            doc.data["name"] = skill  # the suite's key; Agent Skills names are lowercase-hyphen
        return doc, self.warnings, self.errors

    def test(self, case: Any, index: int, new: DataPath, skill: Any) -> dict[str, Any] | None:
        """Case `index` as a test at `new` (its positions filed there); None when skipped."""
        at: DataPath = ("evals", index)
        prompt = case.get("prompt") if isinstance(case, dict) else None
        if not isinstance(prompt, str) or not prompt.strip():
            self.warnings.append(
                self.issue(
                    at,
                    f"evals[{index}] has no prompt, skipped (as AgentV skips it)",
                    'give the case a "prompt", the task the agent is asked',
                )
            )
            return None
        assert isinstance(case, dict)
        expected = case.get("expected_output")
        self.place(new, at)
        test: dict[str, Any] = {
            "id": _js_string(case["id"]) if "id" in case else "undefined",
            "input": prompt,
            "criteria": expected if isinstance(expected, str) else "",
        }
        if isinstance(expected, str) and expected:
            test["expected_output"] = expected
        self.place((*new, "input"), (*at, "prompt"))
        self.place((*new, "criteria"), (*at, "expected_output"))
        assertions = case.get("assertions")
        if isinstance(assertions, list) and assertions:
            test["assertions"] = [
                self.assertion(text, (*at, "assertions", n)) for n, text in enumerate(assertions)
            ]
        elif not test["criteria"]:
            # AgentV judges even a bare prompt (its default llm-grader, with empty criteria),
            # where a YAML test needs criteria for the implicit grader.
            test["assertions"] = [{"type": "llm-grader"}]
        metadata: dict[str, Any] = {}
        if skill:
            metadata["skill_name"] = skill
        files = case.get("files")
        if isinstance(files, list) and files:
            metadata[FILES_KEY] = files
            metadata[BASE_DIR_KEY] = str(self.base_dir)
            for n, value in enumerate(files):
                self.file(value, (*at, "files", n))
        if metadata:
            test["metadata"] = metadata
        return test

    def assertion(self, text: Any, at: DataPath) -> dict[str, Any]:
        number = at[-1] + 1 if isinstance(at[-1], int) else 1
        if not isinstance(text, str):
            self.errors.append(
                self.issue(
                    at,
                    f"an Agent Skills assertion is a sentence to judge; got {_kind(text)}",
                    'write it as a string, e.g. "The answer names the top month"',
                )
            )
        return {"name": f"assertion-{number}", "type": "llm-grader", "prompt": str(text)}

    def file(self, value: Any, at: DataPath) -> None:
        if not isinstance(value, str):
            self.errors.append(
                self.issue(at, f"a file is a path; got {_kind(value)}", 'write "evals/files/x"')
            )
        elif not exists(self.base_dir / value):
            self.warnings.append(
                self.issue(
                    at,
                    f"file '{value}' not found in {self.base_dir}; the agent is given its path "
                    "anyway (as AgentV does)",
                    "correct the path (relative to the evals.json folder) or create the file",
                )
            )


def _js_string(value: Any) -> str:
    """`String(value)` as AgentV computes a test id from a case's `id`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else json.dumps(value)
