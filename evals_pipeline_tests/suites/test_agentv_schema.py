"""Every key AgentV 4.42.4's eval-file schema allows loads here, or is listed as not accepted.

The schema is AgentV's own, as the pinned npm package `agentv@4.42.4` ships it (`make agentv`
installs it into conformance/node_modules; nothing of it is copied here). For
each property path it allows (`workspace.hooks.after_each.reset`, `tests[].vars`, ...) a minimal
suite holding just that path is written and loaded. Assertion and preprocessor items are the
graders' business and are not walked into here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project

SCHEMA_FILE = (
    Path(__file__).parents[2]
    / "conformance/node_modules/agentv/dist/skills/agentv-eval-writer/references/eval-schema.json"
)
SCHEMA = json.loads(SCHEMA_FILE.read_text())["definitions"]["EvalFile"]
DOCS = Path(__file__).parents[2] / "docs/suite-format.md"
_LEAF_LISTS = {"assertions", "evaluators", "preprocessors"}  # items: the graders' schema

# Values that must name something that exists for the suite to load.
_SAMPLES: dict[str, Any] = {
    "target": "mock",
    "targets[]": "mock",
    "name": "mock",
    "use_target": "mock",
    "template": ".",
    "path": ".",
    "cwd": ".",
    "input_files[]": "f.txt",
    "depends_on[]": "base",
    "id": "walked",
    "repo": "https://example.com/org/repo.git",
}

# A repo needs a folder inside the workspace and a source (AgentV's validator requires `repo`).
_REPO = {"path": "r", "repo": _SAMPLES["repo"]}


def _object(node: dict[str, Any]) -> dict[str, Any] | None:
    if "properties" in node:
        return node
    for branch in node.get("anyOf", []):
        found = _object(branch)
        if found is not None and branch.get("type") != "array":
            return found
    return None


def _array(node: dict[str, Any]) -> dict[str, Any] | None:
    if node.get("type") == "array":
        return node
    return next((b for b in node.get("anyOf", []) if b.get("type") == "array"), None)


def paths(node: dict[str, Any], prefix: str = "") -> list[str]:
    """Every property path below `node`: `a.b`, `a[].c`, `a[]` for a list of scalars."""
    found: list[str] = []
    obj = _object(node)
    for key, child in (obj or {}).get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        found.append(path)
        if key in _LEAF_LISTS:
            continue
        found += paths(child, path)
        array = _array(child)
        if array is not None and "items" in array:
            found.append(f"{path}[]")
            found += paths(array["items"], f"{path}[]")
    return sorted(set(found))


def sample(node: dict[str, Any], key: str) -> Any:
    """A small valid value for a schema node (`key`: its name, for values that must exist)."""
    if key in _SAMPLES:
        return _SAMPLES[key]
    if key == "repos[]":
        return dict(_REPO)
    if key in _LEAF_LISTS:
        return []
    if "enum" in node:
        return node["enum"][0]
    if "anyOf" in node:
        return sample(node["anyOf"][0], key)
    kind = node.get("type")
    if kind == "string":
        return "x"
    if kind in ("number", "integer"):
        if node.get("exclusiveMinimum"):
            return node.get("maximum", 1)
        return max(node.get("minimum", 1), 1) if "maximum" not in node else node["maximum"]
    if kind == "boolean":
        return False
    if kind == "array":
        return [sample(node["items"], f"{key}[]")] if node.get("minItems") else []
    if kind == "object" or "properties" in node:
        return {k: sample(node["properties"][k], k) for k in node.get("required", [])}
    return "x"


def build(node: dict[str, Any], steps: list[str], key: str) -> Any:
    """A value for `node` in which the property chain `steps` is present."""
    if not steps:
        return sample(node, key)
    step = steps[0]
    if step == "[]":
        array = _array(node)
        assert array is not None
        return [build(array["items"], steps[1:], f"{key}[]")]
    obj = _object(node)
    assert obj is not None, (key, steps)
    value = {k: sample(obj["properties"][k], k) for k in obj.get("required", [])}
    value[step] = build(obj["properties"][step], steps[1:], step)
    if key == "repos[]":
        value.update(_REPO, **({"repo": value["repo"]} if step == "repo" else {}))
    return value


def _steps(path: str) -> list[str]:
    return [s for s in re.split(r"\.|(\[\])", path) if s]


CONVERSATION_KEYS = {"mode", "turns", "aggregation", "on_turn_failure", "window_size"}


def suite_for(path: str) -> dict[str, Any]:
    data = build(SCHEMA, _steps(path), "")
    key = "eval_cases" if path.startswith("eval_cases") else "tests"
    base = {"id": "base", "input": "hi", "criteria": "c"}
    tests = data.get(key)
    if isinstance(tests, list) and tests:
        walked = tests[0] if isinstance(tests[0], dict) else {}
        if CONVERSATION_KEYS & walked.keys():
            # AgentV's validator accepts these only in a conversation with turns.
            walked = {"mode": "conversation", "turns": [{"input": "hi"}], **walked}
        data[key] = [base, {"input": "hi", "criteria": "c", **walked}]
    else:
        data[key] = [base]
    if key == "eval_cases":
        data.pop("tests", None)
    return data


ALL_PATHS = paths(SCHEMA)


def test_the_walk_covers_the_schema() -> None:
    assert len(ALL_PATHS) > 150
    for expected in (
        "workspace.hooks.after_each.reset",
        "tests[].vars",
        "execution.trials.cost_limit_usd",
        "workspace.repos[].sparse[]",
        "tests[].execution.failOnError",
    ):
        assert expected in ALL_PATHS


@pytest.mark.parametrize("path", ALL_PATHS)
def test_every_agentv_key_loads(project: Project, path: str) -> None:
    project.write("f.txt", "x")
    load_suite(project.write("s.eval.yaml", json.dumps(suite_for(path), indent=2)))
