"""Parts of a suite kept in other files, spliced into the eval file's data before validation.

As AgentV 4.42.4 reads them (loaders/case-file-loader.ts, yaml-parser.ts):
- `tests: path` names a `.yaml`/`.yml` file holding a list of tests, a `.jsonl` file with one
  test per line, or a folder whose `<name>/case.yaml` files are one test each (the folder name
  is the default `id`; a `<name>/workspace/` folder is the default `workspace.template`);
- an entry `file://path` (a glob is allowed) in the `tests` list is replaced by that file's tests;
- `workspace: path` (suite or test level) names a workspace YAML; relative paths inside it
  (template, hook cwd, local repos) resolve from its own folder, where its hooks also run.

Paths resolve from the eval file's folder. Positions of spliced data keep the file they came
from, so a later error names the line in that file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals_pipeline.models.workspace import is_remote
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.paths import absolute
from evals_pipeline.suites.probes import folder_names, glob_matches, is_dir, is_file, read_utf8
from evals_pipeline.suites.yaml_positions import (
    DataPath,
    Positions,
    YamlDocument,
    parse_yaml,
    read_yaml_file,
)

FILE_PREFIX = "file://"
_TEST_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl")
_HOOKS = ("before_all", "before_each", "after_each", "after_all")


class _Splicer:
    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.base_dir = Path(doc.file).parent
        self.issues: list[SuiteIssue] = []

    def report(self, path: DataPath, message: str, fix: str) -> None:
        mark = self.doc.positions.value(path)
        self.issues.append(
            SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, message, fix)
        )

    def suite(self, data: dict[str, Any]) -> None:
        key = next((k for k in ("tests", "eval_cases", "evalcases") if k in data), None)
        if key is not None:
            tests = data[key]
            if isinstance(tests, str):
                self.tests_path(data, key, tests)
            elif isinstance(tests, list):
                self.file_entries(data, key, tests)
        self.workspace(data, ())
        tests = data.get(key) if key else None
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                if isinstance(test, dict):
                    self.workspace(test, (key, index))  # type: ignore[arg-type]

    # -- tests ------------------------------------------------------------------------------

    def tests_path(self, data: dict[str, Any], key: str, value: str) -> None:
        target = absolute(value, self.base_dir)
        loaded: list[tuple[Any, Positions, str, int]] | None
        if is_dir(target):
            loaded = self.case_folder(target, (key,))
        elif is_file(target):
            loaded = self.test_file(target, (key,), value)
        else:
            self.report(
                (key,),
                f"tests file '{value}' not found",
                f"looked for {target}; write the path of a .yaml or .jsonl file of tests, or "
                "of a folder of <id>/case.yaml, relative to the eval file's folder",
            )
            return
        if loaded is not None:
            self.place(data, key, loaded)

    def file_entries(self, data: dict[str, Any], key: str, tests: list[Any]) -> None:
        if not any(isinstance(t, str) and t.startswith(FILE_PREFIX) for t in tests):
            return
        loaded: list[tuple[Any, Positions, str, int]] = []
        for index, entry in enumerate(tests):
            if not (isinstance(entry, str) and entry.startswith(FILE_PREFIX)):
                loaded.append((entry, _subtree(self.doc.positions, (key, index)), "", 0))
                continue
            pattern = entry[len(FILE_PREFIX) :]
            if any(c in pattern for c in "*?{"):
                # AgentV sorts the matches; a pattern matching nothing adds no tests.
                files = list(glob_matches(str(absolute(pattern, self.base_dir))))
            else:
                files = [str(absolute(pattern, self.base_dir))]
            for file in files:
                path = Path(file)
                if not is_file(path):
                    self.report(
                        (key, index),
                        f"tests file '{pattern}' not found",
                        f"looked for {path}; correct the path (relative to the eval file's folder)",
                    )
                    continue
                loaded.extend(self.test_file(path, (key, index), pattern) or [])
        self.place(data, key, loaded)

    def place(
        self, data: dict[str, Any], key: str, loaded: list[tuple[Any, Positions, str, int]]
    ) -> None:
        """Make `loaded` (each test, its positions, its file, line offset) the tests list."""
        data[key] = [item for item, _, _, _ in loaded]
        for index, (_, positions, file, offset) in enumerate(loaded):
            if file:
                self.doc.positions.graft(positions, (key, index), file, offset)
            else:  # an inline test: its own positions, moved to its new index
                self.doc.positions.graft(positions, (key, index), self.doc.file)

    def test_file(
        self, file: Path, at: DataPath, shown: str
    ) -> list[tuple[Any, Positions, str, int]] | None:
        suffix = file.suffix.lower()
        if suffix not in _TEST_FILE_SUFFIXES:
            self.report(
                at,
                f"tests file '{shown}' has the extension '{suffix}'",
                "use a .yaml, .yml or .jsonl file of tests",
            )
            return None
        try:
            text = read_utf8(file)
        except (OSError, UnicodeDecodeError) as exc:
            self.report(at, f"cannot read tests file '{shown}': {exc}", "check the file")
            return None
        if not text.strip():
            return []  # AgentV warns and adds no tests
        if suffix == ".jsonl":
            return self.jsonl(text, str(file))
        try:
            doc = parse_yaml(text, str(file))
        except SuiteError as exc:
            self.issues += exc.issues
            return None
        if not isinstance(doc.data, list):
            self.issues.append(
                SuiteIssue(
                    str(file),
                    1,
                    1,
                    "a tests file must hold a YAML list of tests",
                    "write one '- id: my-test' entry per test",
                )
            )
            return None
        return [
            (item, _subtree(doc.positions, (i,)), str(file), 0) for i, item in enumerate(doc.data)
        ]

    def jsonl(self, text: str, file: str) -> list[tuple[Any, Positions, str, int]] | None:
        tests: list[tuple[Any, Positions, str, int]] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                json.loads(line)
                doc = parse_yaml(line, file)  # JSON is YAML: this also gives key positions
            except (json.JSONDecodeError, SuiteError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not JSON"
                column = exc.colno if isinstance(exc, json.JSONDecodeError) else 1
                self.issues.append(
                    SuiteIssue(
                        file,
                        number,
                        column,
                        f"malformed JSONL line: {reason}",
                        'write one JSON object per line, e.g. {"id": "t1", "input": "hi"}',
                    )
                )
                continue
            if not isinstance(doc.data, dict):
                self.issues.append(
                    SuiteIssue(
                        file, number, 1, "a JSONL test must be a JSON object", 'write {"id": ...}'
                    )
                )
                continue
            tests.append((doc.data, doc.positions, file, number - 1))
        return tests

    def case_folder(self, folder: Path, at: DataPath) -> list[tuple[Any, Positions, str, int]]:
        tests: list[tuple[Any, Positions, str, int]] = []
        for sub in (folder / name for name in folder_names(folder)):
            if not is_dir(sub):
                continue
            case_file = next((sub / n for n in ("case.yaml", "case.yml") if is_file(sub / n)), None)
            if case_file is None:
                continue  # AgentV skips it with a warning
            try:
                doc = read_yaml_file(case_file)
            except SuiteError as exc:
                self.issues += exc.issues
                continue
            if not isinstance(doc.data, dict):
                self.issues.append(
                    SuiteIssue(
                        str(case_file),
                        1,
                        1,
                        "a case.yaml must hold one test (key: value lines)",
                        "write the test's keys (input, assertions, ...) at the top level",
                    )
                )
                continue
            test = dict(doc.data)
            if test.get("id") is None:
                test["id"] = sub.name
            if not test.get("workspace") and is_dir(sub / "workspace"):
                test["workspace"] = {"template": str(sub / "workspace")}
            tests.append((test, doc.positions, str(case_file), 0))
        return tests

    # -- workspace files --------------------------------------------------------------------

    def workspace(self, owner: dict[str, Any], at: DataPath) -> None:
        value = owner.get("workspace")
        if not isinstance(value, str):
            return
        data = self.workspace_file(value, (*at, "workspace"))
        if data is None:
            del owner["workspace"]  # reported: validation need not call the string wrong
        else:
            owner["workspace"] = data

    def workspace_file(self, value: str, path: DataPath) -> dict[str, Any] | None:
        """The workspace a file holds, paths rooted at its folder; None (reported) if unusable."""
        file = absolute(value, self.base_dir)
        if not is_file(file):
            self.report(
                path,
                f"workspace file '{value}' not found",
                f"looked for {file}; correct the path (relative to the eval file's folder) or "
                "write the workspace inline",
            )
            return None
        try:
            doc = read_yaml_file(file)
        except SuiteError as exc:
            self.issues += exc.issues
            return None
        data = doc.data
        if not isinstance(data, dict):
            self.issues.append(
                SuiteIssue(
                    str(file),
                    1,
                    1,
                    "a workspace file must hold key: value lines",
                    "write template:, repos:, hooks: ... at the top level",
                )
            )
            return None
        if set(data) == {"workspace"} and isinstance(data["workspace"], dict):
            self.issues.append(
                SuiteIssue(
                    str(file),
                    1,
                    1,
                    "the workspace file has a top-level 'workspace:' wrapper",
                    "remove 'workspace:' and un-indent its keys",
                )
            )
            return None
        self.doc.positions.graft(doc.positions, path, str(file))
        return _rooted(data, file.parent)


def _rooted(workspace: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A workspace file's data with its relative paths made absolute from its folder, and its
    hooks' default cwd set to that folder (AgentV's rule)."""
    data = dict(workspace)
    if isinstance(data.get("template"), str):
        data["template"] = str(absolute(data["template"], folder))
    if isinstance(data.get("repos"), list):
        data["repos"] = [
            {**r, "repo": str(absolute(r["repo"], folder))}
            if isinstance(r, dict)
            and isinstance(r.get("repo"), str)
            and r["repo"]
            and not is_remote(r["repo"])
            else r
            for r in data["repos"]
        ]
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        hooks = data["hooks"] = dict(hooks)
        for name in _HOOKS:
            hook = hooks.get(name)
            if isinstance(hook, dict):
                cwd = hook.get("cwd")
                hooks[name] = {
                    **hook,
                    "cwd": str(absolute(cwd, folder) if isinstance(cwd, str) else folder),
                }
    return data


def _subtree(positions: Positions, prefix: DataPath) -> Positions:
    """The positions under `prefix`, re-rooted at ()."""
    sub = Positions()
    for mine, theirs in ((sub.keys, positions.keys), (sub.values, positions.values)):
        for path, mark in theirs.items():
            if path[: len(prefix)] == prefix:
                mine[path[len(prefix) :]] = mark
    return sub


SIDECAR_KEYS = ("name", "description", "execution")
"""What AgentV reads from a JSONL suite's sidecar `<name>.yaml` (loaders/jsonl-parser.ts)."""


def jsonl_suite(file: Path) -> YamlDocument:
    """A `.jsonl` file run as a suite, as `agentv eval cases.jsonl` runs it: its tests, with
    `name`, `description` and `execution` from the sidecar `<name>.yaml` beside it, if any."""
    sidecar = file.with_suffix(".yaml")
    if is_file(sidecar):
        doc = read_yaml_file(sidecar)
        data = doc.data if isinstance(doc.data, dict) else {}
        doc.data = {k: v for k, v in data.items() if k in SIDECAR_KEYS}
    else:
        doc = YamlDocument(file=str(file), data={}, positions=Positions())
    doc.data["tests"] = f"./{file.name}"
    doc.file = str(sidecar if is_file(sidecar) else file)
    return doc


def splice_suite_parts(doc: YamlDocument) -> list[SuiteIssue]:
    """Splice external tests and workspace files into `doc` in place; the problems found."""
    splicer = _Splicer(doc)
    if isinstance(doc.data, dict):
        splicer.suite(doc.data)
    return splicer.issues
