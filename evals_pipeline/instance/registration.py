"""Who may add a suite's case partitions: its registration only (the suite's sensor,
`evals-pipeline register` and `run`), never the UI's "Add partition", whose typo would be a
case no suite file holds, run and failed by every backfill that selects it.

Dagster's webserver adds a dynamic partition through the instance, with no hook of its own
(its permission to edit dynamic partitions is all or nothing); the instance class below is
where every process that opens the instance from dagster.yaml (the webserver, the daemon,
the code server, the commands) passes, on sqlite and Postgres alike."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import dagster as dg

from evals_pipeline.dagster_private import InstanceRef
from evals_pipeline.errors import EvalsPipelineError

CASES_SUFFIX = "__cases"
"""The end of every suite's case partitions' name: `<suite>__cases`."""

_registering: ContextVar[bool] = ContextVar("registering_cases", default=False)


class UnregisteredCaseError(EvalsPipelineError, ValueError):
    """A case partition added by something other than the suite's registration."""


@contextmanager
def registering() -> Iterator[None]:
    """Within: this thread registers a suite's cases, so it may add case partitions."""
    token = _registering.set(True)
    try:
        yield
    finally:
        _registering.reset(token)


def check_case_partitions_added(partitions_def_name: str, partition_keys: Sequence[str]) -> None:
    """Raise unless `partition_keys` join `partitions_def_name` by registration: always for
    other partitions; for a suite's cases, only while `registering`."""
    if not partitions_def_name.endswith(CASES_SUFFIX) or _registering.get():
        return
    suite = partitions_def_name.removesuffix(CASES_SUFFIX)
    keys = ", ".join(repr(k) for k in partition_keys)
    raise UnregisteredCaseError(
        f"{keys} not added: the cases of suite {suite!r} are the tests of its suite file. "
        f"Add the test to the suite file and its {suite}_cases sensor registers it (or run "
        "`evals-pipeline register <suite file>`); then pick it in the backfill dialog."
    )


class EvalInstance(dg.DagsterInstance):
    """Dagster's instance, with a suite's case partitions added only by its registration
    (`instance_class` in dagster.yaml)."""

    # A custom instance class tells Dagster its own settings (none) and its storages' defaults
    # (Dagster's).
    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        return {}

    config_defaults = staticmethod(InstanceRef.config_defaults)

    def add_dynamic_partitions(
        self, partitions_def_name: str, partition_keys: Sequence[str]
    ) -> None:
        check_case_partitions_added(partitions_def_name, partition_keys)
        super().add_dynamic_partitions(partitions_def_name, partition_keys)
