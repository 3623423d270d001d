"""The runner's settings: every EVALS_PIPELINE_* variable the source names is a field of one
model (settings.py), documented in the README; no other module reads one from the environment;
the code location holds them as one resource; and `run` hands its flags to its steps as
arguments, leaving the environment as it found it."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import dagster as dg
import pytest

import evals_pipeline
from evals_pipeline.defs.settings_resource import SETTINGS_KEY, EvalsSettings
from evals_pipeline.settings import Settings, env_names
from evals_pipeline_tests.test_cli import write

SOURCE = Path(evals_pipeline.__file__).resolve().parent
README = SOURCE.parent / "README.md"
# Set by the runner for the processes it starts, which read them; not the runner's settings.
FOR_CHILDREN = {
    "EVALS_PIPELINE_PROC",
    "EVALS_PIPELINE_OWNER",
    "EVALS_PIPELINE_MESSAGES_PATH",
    "EVALS_PIPELINE_TRACE_PATH",
}
NAME = re.compile(r"EVALS_PIPELINE_[A-Z0-9_]*[A-Z0-9]")


def source_files() -> list[Path]:
    return sorted(p for p in SOURCE.rglob("*") if p.suffix in {".py", ".mjs"})


def test_every_variable_the_source_names_is_a_setting_and_documented() -> None:
    named = {name for path in source_files() for name in NAME.findall(path.read_text())}
    assert named - FOR_CHILDREN, "the grep found nothing: the pattern is wrong"
    assert sorted(named - FOR_CHILDREN - set(env_names())) == []
    section = README.read_text().split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `")]
    documented = {line.split("`")[1] for line in table}
    assert sorted(set(env_names()) - documented) == [], "add a row to README's settings table"


def _reads(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, variable) of each `os.environ.get(X)`, `os.environ[X]`, `os.getenv(X)` and
    `os.environ.setdefault(X, ...)` whose X is a literal, or a module constant bound to one."""
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }

    def named(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return constants.get(node.id) if isinstance(node, ast.Name) else None

    found = []
    for node in ast.walk(tree):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and node.args
            and ast.unparse(node.func)
            in {
                "os.environ.get",
                "os.getenv",
                "os.environ.setdefault",
                "os.environ.pop",
            }
        ):
            key = node.args[0]
        name = named(key) if key is not None else None
        if name is not None:
            found.append((node.lineno, name))
    return found


def test_only_settings_reads_a_setting_from_the_environment() -> None:
    settings_module = SOURCE / "settings.py"
    wrong = [
        f"{path.relative_to(SOURCE.parent)}:{line}: {name}"
        for path in source_files()
        if path.suffix == ".py" and path != settings_module
        for line, name in _reads(ast.parse(path.read_text()))
        if name in env_names()
    ]
    assert wrong == [], "read it from Settings (evals_pipeline/settings.py) instead"


# The entry points that read the environment's settings once, for their process.
READ_ONCE = {
    "cli/entry.py": {"main"},
    "defs/definitions.py": {"definitions_from_env"},
    "defs/settings_resource.py": {"from_env", "_resource"},
    "defs/suite_run.py": {"reconstruct_run_job"},
}


def _from_env_calls(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, enclosing function) of each `Settings.from_env(...)` / `EvalsSettings.from_env`."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef) else function
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "from_env"
                and ast.unparse(child.func.value) in {"Settings", "EvalsSettings", "cls"}
            ):
                found.append((child.lineno, function))
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_only_the_entry_points_read_the_settings_from_the_environment() -> None:
    """Deep helpers take the settings as arguments or as the process's (Settings.current):
    none reads the environment on each call."""
    wrong = [
        f"{name}:{line} in {function}"
        for path in source_files()
        if path.suffix == ".py" and path != SOURCE / "settings.py"
        for name in [path.relative_to(SOURCE).as_posix()]
        for line, function in _from_env_calls(ast.parse(path.read_text()))
        if function not in READ_ONCE.get(name, set())
    ]
    assert wrong == [], "take the settings as an argument, or Settings.current()"
    calls = _from_env_calls(ast.parse((SOURCE / "cli" / "entry.py").read_text()))
    assert calls, "the walk finds nothing: it is wrong"


def test_the_process_reads_its_settings_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from evals_pipeline.sandbox.detection import sandbox_disabled

    monkeypatch.delenv("EVALS_PIPELINE_SANDBOX", raising=False)
    Settings.reload()
    assert not sandbox_disabled()
    monkeypatch.setenv("EVALS_PIPELINE_SANDBOX", "off")
    assert not sandbox_disabled(), "a helper does not read the environment again"
    with Settings.from_env({"EVALS_PIPELINE_SANDBOX": "off"}).use():
        assert sandbox_disabled()
    assert not sandbox_disabled()
    Settings.reload()
    assert sandbox_disabled()


def test_settings_keep_unset_apart_from_empty() -> None:
    settings = Settings.from_env({"EVALS_PIPELINE_STORAGE": "", "EVALS_PIPELINE_UMASK": "022"})
    assert settings.storage == "" and settings.umask == "022" and settings.suites is None
    assert Settings.env_name("dagster_home") == "DAGSTER_HOME"


def test_the_code_location_holds_the_settings_as_one_resource_of_env_vars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evals_pipeline.defs.definitions import build_definitions

    monkeypatch.setenv("EVALS_PIPELINE_NIGHTLY_CRON", "0 3 * * *")
    monkeypatch.delenv("EVALS_PIPELINE_UMASK", raising=False)
    resource = EvalsSettings.from_env()
    assert isinstance(resource.nightly_cron, dg.EnvVar) and resource.umask is None
    assert SETTINGS_KEY in build_definitions([], "/tmp/unused").resources

    seen: list[Settings] = []

    @dg.asset
    def reads_settings(settings: EvalsSettings) -> None:
        seen.append(settings.settings())

    # Dagster reads the variable in the process that runs the step.
    monkeypatch.setenv("EVALS_PIPELINE_NIGHTLY_CRON", "0 4 * * *")
    assert dg.materialize([reads_settings], resources={SETTINGS_KEY: resource}).success
    assert seen[0].nightly_cron == "0 4 * * *" and seen[0].umask is None


def test_run_passes_its_flags_on_and_leaves_the_environment_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals_pipeline.cli import main

    suite = write(
        tmp_path / "evals",
        "s.eval.yaml",
        "tests: [{id: a, input: hi, assertions: [{type: contains, value: hello}]}]\n",
    )
    chosen = write(
        tmp_path / "conf",
        "agents.yaml",
        "targets:\n  - name: echoer\n    provider: cli\n    command: echo hello > {OUTPUT_FILE}\n",
    )
    storage = tmp_path / "chosen-storage"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    for name in env_names():
        if name != "DAGSTER_HOME":
            monkeypatch.delenv(name, raising=False)
    settings = {name: os.environ.get(name) for name in env_names()}
    code = main(
        ["run", str(suite), "--targets", str(chosen), "--storage", str(storage), "--limit", "cli=2"]
    )
    assert code == 0
    # (Dagster's own switches, which it reads only from the environment, are set: event_volume.py)
    assert {name: os.environ.get(name) for name in env_names()} == settings
    assert list(storage.glob("*/eval_report/*/*")), "the report is under --storage"


def test_run_finds_dagster_home_without_setting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals_pipeline.cli.locations import cli_instance

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    instance = cli_instance()
    assert Path(instance.root_directory) == (tmp_path / ".evals" / "dagster").resolve()
    assert "DAGSTER_HOME" not in os.environ


def test_the_case_pipeline_and_the_report_take_the_settings_resource() -> None:
    """The steps whose helpers read settings run under the resource's (Settings.use)."""
    from evals_pipeline.defs.definitions import load_suites
    from evals_pipeline.defs.suite_run import SuiteAssets

    [suite] = load_suites([SOURCE.parent / "examples" / "quickstart"])
    assets = SuiteAssets.of(suite)
    [pipeline] = [a for a in assets.layers if a.node_def.name.endswith("__case_pipeline")]
    assert SETTINGS_KEY in pipeline.required_resource_keys
    assert SETTINGS_KEY in assets.report.required_resource_keys
