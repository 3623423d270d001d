"""The runner's settings (settings.py) as the code location's one resource, `settings`: each
variable the environment sets is a `dg.EnvVar`, so the UI shows where a value comes from and
Dagster reads it in the process that uses it (a run worker, a celery worker)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping

import dagster as dg

from evals_pipeline.settings import Settings, env_names

SETTINGS_KEY = "settings"


class EvalsSettings(dg.ConfigurableResource):
    """One field per setting, named as Settings names it; None where the variable is unset."""

    suites: str | None = None
    storage: str | None = None
    storage_cache: str | None = None
    dagster_home: str | None = None
    nightly_cron: str | None = None
    executor: str | None = None
    celery_broker: str | None = None
    celery_backend: str | None = None
    targets: str | None = None
    provider_limits: str | None = None
    agents_dir: str | None = None
    sandbox: str | None = None
    sandbox_writable: str | None = None
    workspace_state_max_mb: str | None = None
    umask: str | None = None
    state_dir: str | None = None
    view_url: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EvalsSettings:
        """The resource over the variables `environ` (default: this process's) sets."""
        source = os.environ if environ is None else environ
        return cls(
            **{
                field: dg.EnvVar(Settings.env_name(field))
                for field in Settings.model_fields
                if Settings.env_name(field) in source
            }
        )

    def settings(self) -> Settings:
        """The settings as domain code takes them, as arguments."""
        return Settings.model_validate({f: getattr(self, f) for f in Settings.model_fields})


# The workers' own: a broker URL may hold a password, and a run's config is stored with it.
_WORKERS_OWN = frozenset({"celery_broker", "celery_backend"})


def settings_run_config(settings: Settings) -> dict[str, object]:
    """The run config that hands `settings` to the run's steps, wherever they run: a celery
    worker serving many runs takes each run's settings, not those of its own environment."""
    return {"resources": {SETTINGS_KEY: {"config": run_settings(settings)}}}


def run_settings(settings: Settings) -> dict[str, str]:
    """The settings a run carries, by field: those set, but the workers' own."""
    return {
        field: value
        for field, value in settings.model_dump().items()
        if value is not None and field not in _WORKERS_OWN
    }


def settings_resource() -> EvalsSettings:
    """This process's resource: one object while the same variables are set (suites built
    apart share it); Dagster reads their values where a step runs."""
    return _resource(tuple(name for name in env_names() if name in os.environ))


@functools.cache
def _resource(names: tuple[str, ...]) -> EvalsSettings:
    return EvalsSettings.from_env(dict.fromkeys(names, ""))
