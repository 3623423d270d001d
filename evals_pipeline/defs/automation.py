"""When suites run by themselves: a nightly pass over every partition, and a report refresh
whenever grades change."""

from __future__ import annotations

import os

import dagster as dg

DEFAULT_NIGHTLY_CRON = "0 2 * * *"


def nightly_cron() -> str:
    return os.environ.get("EVALS_PIPELINE_NIGHTLY_CRON", DEFAULT_NIGHTLY_CRON)


def nightly() -> dg.AutomationCondition:
    """Every partition once a night, in batched runs (the assets' backfill policy)."""
    return dg.AutomationCondition.on_cron(nightly_cron(), cron_timezone="UTC")


def report_refresh() -> dg.AutomationCondition:
    """The report follows its grades: nightly, and after any grades partition updates (a
    missing partition, such as a case not yet run, does not hold it back)."""
    updated = (
        dg.AutomationCondition.any_deps_updated()
        & ~dg.AutomationCondition.any_deps_in_progress()
        & ~dg.AutomationCondition.in_progress()
    )
    return nightly() | updated.with_label("grades updated")


automation_sensor = dg.AutomationConditionSensorDefinition(
    "evals_automation",
    target=dg.AssetSelection.all(),
    emit_backfills=True,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=60,
)
