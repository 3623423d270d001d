"""When suites run by themselves: a nightly pass over every partition, and a report refresh
whenever grades change."""

from __future__ import annotations

import dagster as dg

from evals_pipeline.settings import Settings

DEFAULT_NIGHTLY_CRON = "0 2 * * *"
AUTOMATION_SENSOR = "nightly_evals"
"""The sensor's name on the Automation page; its runs carry it as `dagster/sensor_name`."""


def nightly_cron(settings: Settings | None = None) -> str:
    """EVALS_PIPELINE_NIGHTLY_CRON of `settings` (default: this process's), else 02:00 UTC."""
    value = (settings or Settings.current()).nightly_cron
    return DEFAULT_NIGHTLY_CRON if value is None else value


def nightly_label(cron: str) -> str:
    """The nightly condition as the UI shows it: "nightly 02:00 UTC" for a daily cron, else the
    cron itself."""
    fields = cron.split()
    if len(fields) == 5 and fields[2:] == ["*", "*", "*"] and all(f.isdigit() for f in fields[:2]):
        return f"nightly {int(fields[1]):02}:{int(fields[0]):02} UTC"
    return f"nightly ({cron}, UTC)"


def nightly(cron: str | None = None) -> dg.AutomationCondition:
    """Every partition once a night (at `cron`, default EVALS_PIPELINE_NIGHTLY_CRON), in batched
    runs (the assets' backfill policy)."""
    cron = cron or nightly_cron()
    return dg.AutomationCondition.on_cron(cron, cron_timezone="UTC").with_label(nightly_label(cron))


def report_refresh(cron: str | None = None) -> dg.AutomationCondition:
    """The report follows its grades: nightly, and after any grades partition updates (a
    missing partition, such as a case not yet run, does not hold it back)."""
    updated = (
        dg.AutomationCondition.any_deps_updated()
        & ~dg.AutomationCondition.any_deps_in_progress()
        & ~dg.AutomationCondition.in_progress()
    )
    return nightly(cron) | updated.with_label("grades updated")


automation_sensor = dg.AutomationConditionSensorDefinition(
    AUTOMATION_SENSOR,
    description=(
        f"The nightly eval: every suite's cases x agents at {nightly_label(nightly_cron())} "
        "(EVALS_PIPELINE_NIGHTLY_CRON), one batched backfill per layer, then each eval_report; "
        "a report also refreshes when its grades change (a new or edited case run by its suite's "
        "_cases sensor)."
    ),
    target=dg.AssetSelection.all(),
    emit_backfills=True,
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=60,
)
