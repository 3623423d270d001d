"""The executor the suites' jobs run on: in-process (the default), or dagster-celery on a broker
so the steps run on worker processes, on this host or others (docs/scale-out.md)."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Dagster loads only when an executor is made: the CLI reads the setting first
    import dagster as dg

EXECUTOR_ENV = "EVALS_PIPELINE_EXECUTOR"
BROKER_ENV = "EVALS_PIPELINE_CELERY_BROKER"
BACKEND_ENV = "EVALS_PIPELINE_CELERY_BACKEND"
EXECUTORS = ("in_process", "celery")


class ExecutorSettingError(ValueError):
    """EVALS_PIPELINE_EXECUTOR (or the broker it needs) is not set right; the message says how."""


def executor_name() -> str:
    """EVALS_PIPELINE_EXECUTOR: `in_process` (default) or `celery`."""
    name = os.environ.get(EXECUTOR_ENV, "").strip() or "in_process"
    if name not in EXECUTORS:
        raise ExecutorSettingError(
            f"{EXECUTOR_ENV}={name!r} names no executor: use one of {', '.join(EXECUTORS)}"
        )
    if name == "celery" and not os.environ.get(BROKER_ENV):
        raise ExecutorSettingError(
            f"{EXECUTOR_ENV}=celery needs {BROKER_ENV}, the broker the workers listen on "
            "(e.g. redis://127.0.0.1:6379/0); see docs/scale-out.md"
        )
    return name


def executor_from_env() -> dg.ExecutorDefinition:
    """The executor EVALS_PIPELINE_EXECUTOR names. The celery executor reads its broker and
    result backend from the environment of each process that uses them (`{env: ...}`), so a
    broker password is never stored in a run's config or a job snapshot."""
    import dagster as dg

    if executor_name() == "in_process":
        return dg.in_process_executor
    from celery.exceptions import DuplicateTaskNameWarning
    from dagster_celery import celery_executor

    # dagster-celery registers its step task again for every step it sends; harmless, and not
    # the user's to act on.
    warnings.filterwarnings("ignore", category=DuplicateTaskNameWarning)
    backend = BACKEND_ENV if os.environ.get(BACKEND_ENV) else BROKER_ENV
    return celery_executor.configured(
        {"broker": {"env": BROKER_ENV}, "backend": {"env": backend}}, name="celery"
    )


def celery_app_args() -> dict[str, object]:
    """What the workers' celery app is built with: the same broker and backend as the
    executor's (EVALS_PIPELINE_CELERY_BROKER, EVALS_PIPELINE_CELERY_BACKEND)."""
    from dagster_celery.executor import CeleryExecutor

    broker = os.environ.get(BROKER_ENV)
    if not broker:
        raise ExecutorSettingError(
            f"a celery worker needs {BROKER_ENV}, the broker the executor sends steps to "
            "(e.g. redis://127.0.0.1:6379/0); see docs/scale-out.md"
        )
    backend = os.environ.get(BACKEND_ENV) or broker
    return dict(CeleryExecutor.for_cli(broker=broker, backend=backend).app_args())
