"""Every setting the runner reads from its environment, read in one place: one frozen model whose
fields are named by the variables (README, "Settings"). A process reads it once at its entry (the
CLI, the code location, a run worker rebuilding a job) and passes the values down as arguments.

Deep helpers (the sandbox, the workspace-state cap, the child ledger, the agents' folder, the
parse cache, the storage cache) take the process's settings, `Settings.current()`: read at its
entry point and installed there (`install`), or read at first use in a process that has none (a
child, a worker); a step runs under its resource's settings (`use`).

Values stay as the environment gives them (None when unset); each is parsed where it is used,
which says what is wrong with it. Variables the runner sets for its children (EVALS_PIPELINE_PROC,
_OWNER, _MESSAGES_PATH, _TRACE_PATH) are the children's, not settings of the runner.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from pydantic import BaseModel, ConfigDict, Field


class Settings(BaseModel):
    """The runner's settings, one field per environment variable (its alias)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    suites: str | None = Field(
        None, alias="EVALS_PIPELINE_SUITES", description="Suite files or folders, `:`-separated."
    )
    storage: str | None = Field(
        None, alias="EVALS_PIPELINE_STORAGE", description="Storage root: a folder or a URL."
    )
    storage_cache: str | None = Field(
        None, alias="EVALS_PIPELINE_STORAGE_CACHE", description="Local mirror of an object store."
    )
    dagster_home: str | None = Field(
        None, alias="DAGSTER_HOME", description="The Dagster instance."
    )
    nightly_cron: str | None = Field(
        None, alias="EVALS_PIPELINE_NIGHTLY_CRON", description="When the nightly pass runs."
    )
    executor: str | None = Field(
        None, alias="EVALS_PIPELINE_EXECUTOR", description="in_process, multiprocess or celery."
    )
    celery_broker: str | None = Field(None, alias="EVALS_PIPELINE_CELERY_BROKER")
    celery_backend: str | None = Field(None, alias="EVALS_PIPELINE_CELERY_BACKEND")
    targets: str | None = Field(
        None, alias="EVALS_PIPELINE_TARGETS", description="The targets file every suite uses."
    )
    provider_limits: str | None = Field(
        None, alias="EVALS_PIPELINE_PROVIDER_LIMITS", description="PROVIDER=N, comma-separated."
    )
    agents_dir: str | None = Field(
        None, alias="EVALS_PIPELINE_AGENTS_DIR", description="Where the agent CLIs are installed."
    )
    sandbox: str | None = Field(
        None, alias="EVALS_PIPELINE_SANDBOX", description="`off` turns it off."
    )
    sandbox_writable: str | None = Field(
        None, alias="EVALS_PIPELINE_SANDBOX_WRITABLE", description="Extra writable folders."
    )
    workspace_state_max_mb: str | None = Field(None, alias="EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB")
    umask: str | None = Field(
        None, alias="EVALS_PIPELINE_UMASK", description="Umask of what it writes."
    )
    state_dir: str | None = Field(
        None, alias="EVALS_PIPELINE_STATE_DIR", description="Where the child ledger is kept."
    )
    view_url: str | None = Field(
        None,
        alias="EVALS_PIPELINE_VIEW_URL",
        description="Base URL of `evals-pipeline view` that report links point to.",
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings `environ` (default: this process's environment) holds."""
        source = os.environ if environ is None else environ
        return cls.model_validate({name: source[name] for name in env_names() if name in source})

    @classmethod
    def current(cls) -> Settings:
        """This process's settings: those installed, else the environment's, read once."""
        with _lock:
            settings = _current[0]
            if settings is None:
                settings = _current[0] = cls.from_env()
            return settings

    @classmethod
    def install(cls, settings: Settings) -> None:
        """Make `settings` this process's (an entry point that has read them)."""
        with _lock:
            _current[0] = settings

    @classmethod
    def forget(cls) -> None:
        """Drop this process's settings: the next `current()` reads the environment (a test's
        own, set after the last test's were read)."""
        with _lock:
            _current[0] = None

    @classmethod
    def reload(cls) -> Settings:
        """Read the environment again and make that this process's settings (a test that has
        changed a variable)."""
        settings = cls.from_env()
        cls.install(settings)
        return settings

    @contextmanager
    def use(self) -> Iterator[Settings]:
        """This process's settings are these while the block runs (a step, under its resource)."""
        with _lock:
            before = _current[0]
            _current[0] = self
        try:
            yield self
        finally:
            with _lock:
                _current[0] = before

    @classmethod
    def env_name(cls, field: str) -> str:
        """The environment variable of `field`."""
        alias = cls.model_fields[field].alias
        assert alias is not None
        return alias


_lock = threading.Lock()
_current: list[Settings | None] = [None]
"""This process's settings (Settings.current), once read or installed."""


@functools.cache
def env_names() -> tuple[str, ...]:
    """Every environment variable a setting is read from."""
    return tuple(Settings.env_name(field) for field in Settings.model_fields)
