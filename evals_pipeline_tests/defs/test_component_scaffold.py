"""`dg scaffold defs` for the suite component, then `dg check defs`, with the real `dg` CLI
(dagster-dg-cli, a dev dependency) in a copy of the example project: the defs.yaml it writes
loads as it is, and the project's definitions hold the new suite's assets and sensors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib.metadata import entry_points
from pathlib import Path

from evals_pipeline_tests.dagster_dev import BIN
from evals_pipeline_tests.defs.conftest import REPO

EXAMPLE = REPO / "examples" / "dagster-project"
DG = BIN / "dg"
LAYERS = ("cases", "agent_runs", "sessions", "grades", "judgments", "eval_report")


def dg(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`dg ARGS` in `cwd`, on this interpreter's environment (its bin folder first on PATH)."""
    assert DG.exists(), f"{DG} is missing: dg is a dev dependency, installed by `make test`"
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
    }
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(DG), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_scaffolded_defs_load_and_pass_dg_check(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".evals"))
    defs = project / "eval_project" / "defs"
    home = tmp_path / "home"

    # A starter suite written beside the defs.yaml, and an existing eval file named by --suite.
    starter = dg("scaffold", "defs", "EvalSuiteComponent", "smoke", cwd=project, home=home)
    assert starter.returncode == 0, starter.stdout + starter.stderr
    assert (defs / "smoke" / "defs.yaml").read_text() == (
        "type: evals_pipeline.defs.suite_component.EvalSuiteComponent\n\n"
        "attributes:\n  suite: smoke.eval.yaml\n"
    )
    assert (defs / "smoke" / "smoke.eval.yaml").is_file()
    (project / "suites").mkdir()
    shutil.copy(defs / "greetings" / "greetings.eval.yaml", project / "suites" / "hello.eval.yaml")
    suite = project / "suites" / "hello.eval.yaml"
    suite.write_text(suite.read_text().replace("name: greetings", "name: hello"))
    named = dg(
        "scaffold",
        "defs",
        "evals_pipeline.defs.suite_component.EvalSuiteComponent",
        "hello",
        "--suite",
        "suites/hello.eval.yaml",
        cwd=project,
        home=home,
    )
    assert named.returncode == 0, named.stdout + named.stderr
    assert "suite: ../../../suites/hello.eval.yaml" in (defs / "hello" / "defs.yaml").read_text()

    check = dg("check", "defs", cwd=project, home=home)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All definitions loaded successfully." in check.stdout + check.stderr

    listed = dg("list", "defs", "--json", cwd=project, home=home)
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    sources = {a["asset_key"]: a["source"] for a in found["assets"]}
    for name in ("smoke", "hello"):
        for layer in LAYERS:
            assert sources[f"{name}/{layer}"].startswith(f"eval_project/defs/{name}/defs.yaml")
    sensors = {s["name"] for s in found["sensors"]}
    assert {"smoke_cases", "smoke_automation", "hello_cases", "hello_automation"} <= sensors


def test_a_missing_suite_is_refused_with_its_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".evals"))
    done = dg(
        "scaffold",
        "defs",
        "EvalSuiteComponent",
        "nope",
        "--suite",
        "nope.eval.yaml",
        cwd=project,
        home=tmp_path / "home",
    )
    assert done.returncode != 0
    assert f"--suite: no eval file at {project / 'nope.eval.yaml'}" in done.stdout + done.stderr


MINIMAL_PYPROJECT = """\
[project]
name = "plain-project"
version = "0.1.0"

[tool.dg]
directory_type = "project"

[tool.dg.project]
root_module = "plain_project"
"""


def test_dg_finds_the_component_without_registry_modules(tmp_path: Path) -> None:
    """The installed package's `dagster_dg_cli.registry_modules` entry point: a project that
    does not list our module still sees the component."""
    assert any(
        e.value == "evals_pipeline.defs.suite_component"
        for e in entry_points(group="dagster_dg_cli.registry_modules")
    ), "the installed evals-pipeline has no dg entry point: `make test` reinstalls it"
    project = tmp_path / "plain"
    (project / "plain_project" / "defs").mkdir(parents=True)
    (project / "pyproject.toml").write_text(MINIMAL_PYPROJECT)
    (project / "plain_project" / "__init__.py").write_text("")
    done = dg("list", "components", "--json", cwd=project, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    keys = {item["key"] for item in json.loads(done.stdout)["items"]}
    assert "evals_pipeline.defs.suite_component.EvalSuiteComponent" in keys
