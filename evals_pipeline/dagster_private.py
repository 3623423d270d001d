"""Every private Dagster name evals-pipeline uses (`dagster._…`), and only here, so that a
Dagster upgrade is checked in one place: importing this module fails at once, naming both
versions, on a Dagster outside SUPPORTED, and evals_pipeline_tests/test_dagster_private.py
calls each name below as its users do.

Dagster's public API (`import dagster as dg`) is used everywhere else; what is here has no
public equivalent in Dagster 1.13. The names from modules that cost a noticeable import
(the SQL event log and its tables ~0.5 s, the run-execution CLI ~0.2 s, the daemon ~0.1 s) load
when first asked for, so a process that needs none of them does not pay for them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dagster.version import __version__ as DAGSTER_VERSION

from evals_pipeline.errors import EvalsPipelineError

SUPPORTED = ((1, 13), (1, 14))
"""The Dagster releases these names were checked against: at least the first, below the second
(pyproject.toml pins the same range)."""


class UnsupportedDagsterError(ImportError, EvalsPipelineError):
    """The installed Dagster is outside the range whose private names were checked."""


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def check_version(version: str) -> None:
    """Raise UnsupportedDagsterError unless `version` is in SUPPORTED."""
    low, high = SUPPORTED
    if not low <= _release(version) < high:
        raise UnsupportedDagsterError(
            f"evals-pipeline supports Dagster >={low[0]}.{low[1]},<{high[0]}.{high[1]}, but "
            f"Dagster {version} is installed: install a supported one "
            f'(pip install "dagster>={low[0]}.{low[1]},<{high[0]}.{high[1]}")'
        )


check_version(DAGSTER_VERSION)

# These modules are loaded by `import dagster` already: nothing to defer.
from dagster._config import UserConfigSchema  # noqa: E402
from dagster._config.errors import PostProcessingError  # noqa: E402
from dagster._core.definitions.asset_checks.asset_check_evaluation import (  # noqa: E402
    AssetCheckEvaluationPlanned,
    AssetCheckEvaluationTargetMaterializationData,
)
from dagster._core.definitions.partitions.context import PartitionLoadingContext  # noqa: E402
from dagster._core.events import ASSET_EVENTS  # noqa: E402
from dagster._core.instance import DynamicPartitionsStore, InstanceRef  # noqa: E402
from dagster._core.launcher import (  # noqa: E402
    CheckRunHealthResult,
    LaunchRunContext,
    WorkerStatus,
)
from dagster._core.storage.asset_check_execution_record import (  # noqa: E402
    AssetCheckExecutionRecordStatus,
)
from dagster._core.storage.tags import (  # noqa: E402
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)
from dagster._serdes import ConfigurableClassData  # noqa: E402
from dagster._utils import get_run_crash_explanation  # noqa: E402
from dagster._utils.interrupts import capture_interrupts  # noqa: E402

if TYPE_CHECKING:
    from types import ModuleType

    from dagster._cli.api import _execute_run_command_body as execute_run_command_body
    from dagster._core.storage.event_log.schema import (
        AssetCheckExecutionsTable,
        SqlEventLogStorageTable,
    )
    from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
    from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
        INDEX_SHARD_NAME,
        SqliteEventLogStorage,
    )
    from dagster._core.storage.sql import create_engine
    from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS

    daemon_controller: ModuleType

_SCHEMA = "dagster._core.storage.event_log.schema"
_DEFERRED = {
    "AssetCheckExecutionsTable": (_SCHEMA, None),
    "SqlEventLogStorageTable": (_SCHEMA, None),
    "SqlEventLogStorage": ("dagster._core.storage.event_log.sql_event_log", None),
    "create_engine": ("dagster._core.storage.sql", None),
    "SQLITE_BUSY_TIMEOUT_SECONDS": ("dagster._core.storage.sqlite", None),
    "execute_run_command_body": ("dagster._cli.api", "_execute_run_command_body"),
    "INDEX_SHARD_NAME": ("dagster._core.storage.event_log.sqlite.sqlite_event_log", None),
    "SqliteEventLogStorage": ("dagster._core.storage.event_log.sqlite.sqlite_event_log", None),
    "daemon_controller": ("dagster._daemon.controller", ""),
}
"""Name -> (module, its name there: None for the same, "" for the module itself)."""

DAEMON_MAIN_MODULES = ("dagster._daemon", "dagster._daemon.__main__")
"""What `__main__` is in the daemon that `dagster dev` starts (`python -m dagster._daemon`)."""

RUN_WORKER_MODULES = (
    "dagster._cli.api",
    "dagster._core.storage.runs.sqlite",
    "dagster._core.storage.schedules.sqlite",
    "dagster._core.storage.local_compute_log_manager",
)
"""What a run's worker imports beyond `dagster` before its run: its run execution and its
instance's sqlite storages (instance/warm_workers.py preloads them)."""


def __getattr__(name: str) -> Any:
    if name not in _DEFERRED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = _DEFERRED[name]
    module = importlib.import_module(module_name)
    value = module if attribute == "" else getattr(module, attribute or name)
    globals()[name] = value  # asked once
    return value


__all__ = [
    "ASSET_EVENTS",
    "ASSET_PARTITION_RANGE_END_TAG",
    "ASSET_PARTITION_RANGE_START_TAG",
    "DAEMON_MAIN_MODULES",
    "INDEX_SHARD_NAME",
    "RUN_WORKER_MODULES",
    "SQLITE_BUSY_TIMEOUT_SECONDS",
    "SUPPORTED",
    "AssetCheckEvaluationPlanned",
    "AssetCheckEvaluationTargetMaterializationData",
    "AssetCheckExecutionRecordStatus",
    "AssetCheckExecutionsTable",
    "CheckRunHealthResult",
    "ConfigurableClassData",
    "DynamicPartitionsStore",
    "InstanceRef",
    "LaunchRunContext",
    "PartitionLoadingContext",
    "PostProcessingError",
    "SqlEventLogStorage",
    "SqlEventLogStorageTable",
    "SqliteEventLogStorage",
    "UnsupportedDagsterError",
    "UserConfigSchema",
    "WorkerStatus",
    "capture_interrupts",
    "check_version",
    "create_engine",
    "daemon_controller",
    "execute_run_command_body",
    "get_run_crash_explanation",
]
