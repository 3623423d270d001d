"""Build the Definitions of a set of suites: one asset group, sensor and partitions per suite."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import dagster as dg

from evals_pipeline.defs.assets import LAYERS, build_suite_assets
from evals_pipeline.defs.automation import automation_sensor
from evals_pipeline.defs.case_failures import failures_check, failures_spec
from evals_pipeline.defs.executor import executor_from_env
from evals_pipeline.defs.io_manager import IO_MANAGER_KEY, RecordsIOManager
from evals_pipeline.defs.resources import EvalStorage
from evals_pipeline.defs.sensors import build_cases_sensor
from evals_pipeline.defs.settings_resource import SETTINGS_KEY, EvalsSettings, settings_resource
from evals_pipeline.defs.translator import EvalSuiteTranslator, translated
from evals_pipeline.file_modes import apply_umask
from evals_pipeline.gc_pause import freeze_at_exit
from evals_pipeline.settings import Settings
from evals_pipeline.storage_env import storage_root_from_env
from evals_pipeline.suites import LoadedSuite, SuiteError, discover_suites, load_suite
from evals_pipeline.suites.resolution import resolve_recorded

DEFAULT_SUITES = "examples"


def suite_paths_from_env(settings: Settings | None = None) -> list[str]:
    """EVALS_PIPELINE_SUITES of `settings` (default: this process's): files or folders,
    separated by the OS path separator."""
    value = (settings or Settings.current()).suites
    return [p for p in (DEFAULT_SUITES if value is None else value).split(os.pathsep) if p]


def load_suites(paths: Iterable[str | Path]) -> list[LoadedSuite]:
    """Load every suite under `paths`; all errors of all files are reported together."""
    loaded, issues = [], []
    for path in discover_suites(paths):
        try:
            suite = load_suite(path)
            if suite.run_issues:  # the assets resolve every target the suite runs
                raise SuiteError(suite.run_issues)
            loaded.append(suite)
        except SuiteError as exc:
            issues.extend(exc.issues)
    if issues:
        raise SuiteError(issues)
    seen: dict[str, Path] = {}
    for suite in loaded:
        if suite.slug in seen:
            raise ValueError(
                f"suites {seen[suite.slug]} and {suite.path} share the name {suite.slug!r}; "
                "give one of them another `name:`"
            )
        seen[suite.slug] = suite.path
    return loaded


def suite_definitions(
    suite: LoadedSuite, translator: EvalSuiteTranslator | None = None
) -> dg.Definitions:
    """The assets and the cases sensor of one suite, from one resolution of its cases (the
    sensor's first tick reuses it while the suite is unchanged), grouped, automated and tagged
    by `translator` (the default one for the shipped code location; a project's component
    passes its own)."""
    resolution = resolve_recorded(suite)
    assets = build_suite_assets(suite, resolution)
    layers = [dg.AssetKey([suite.slug, name]) for name in LAYERS]
    sensor = build_cases_sensor(
        suite.slug, suite.path, list(suite.targets), layers, resolution=resolution
    )
    defs = dg.Definitions(
        assets=[*assets, failures_spec(suite.slug)],
        asset_checks=[failures_check(suite.slug)],
        sensors=[sensor],
    )
    return translated(defs, suite, translator or EvalSuiteTranslator())


def storage_resources(storage_root: str) -> dict[str, Any]:
    """The IO manager, storage and settings every suite's assets use. One object per root
    (and set of variables), so suites built apart (components of one Dagster project) merge
    into one Definitions."""
    return _resources(storage_root, settings_resource())


@functools.cache
def _resources(storage_root: str, settings: EvalsSettings) -> dict[str, Any]:
    return {
        IO_MANAGER_KEY: RecordsIOManager(root=storage_root),
        "storage": EvalStorage(root=storage_root),
        SETTINGS_KEY: settings,
    }


def build_definitions(
    suites: list[LoadedSuite],
    storage_root: str,
    executor: dg.ExecutorDefinition | None = None,
) -> dg.Definitions:
    """All suites' definitions: local storage, and `executor`, by default the one
    EVALS_PIPELINE_EXECUTOR names (in-process unless set; defs/executor.py)."""
    # Code servers, run workers and the CLI hold the definitions until they exit: skip the
    # interpreter's walk over them then (gc_pause.py).
    freeze_at_exit()
    shared = dg.Definitions(
        sensors=[automation_sensor],
        resources=storage_resources(storage_root),
        executor=executor or executor_from_env(),
    )
    return dg.Definitions.merge(shared, *(suite_definitions(s) for s in suites))


def definitions_from_env() -> dg.Definitions:
    """The code location: suites from EVALS_PIPELINE_SUITES, storage from EVALS_PIPELINE_STORAGE,
    the environment read once (settings.py). Its process (a code server, a run worker loading
    it) writes privately (file_modes.py)."""
    settings = Settings.from_env()
    Settings.install(settings)  # the code location's process: its helpers take these
    apply_umask(settings)
    return build_definitions(
        load_suites(suite_paths_from_env(settings)),
        storage_root_from_env(settings),
        executor_from_env(settings),
    )
