"""The report's run history in Dagster: how its run was started (read from run tags) and the
regression check every report materialization evaluates (docs/report.md)."""

# No `from __future__ import annotations`: kept like the other asset modules Dagster reads.
from collections.abc import Mapping
from typing import Any

import dagster as dg

from evals_pipeline.defs.automation import AUTOMATION_SENSOR
from evals_pipeline.history import check_regressions
from evals_pipeline.models.history import Trigger
from evals_pipeline.models.report import EvalReport

TRIGGER_TAG = "evals/trigger"
TRIGGERS: tuple[Trigger, ...] = ("cli", "nightly", "sensor", "ui")
REGRESSION_CHECK = "no_regression"
_AUTOMATION_TAG = "dagster/from_automation_condition"


def _launched_by(tags: Mapping[str, str], suite: str) -> Trigger | None:
    """What the tags say about how a run was started; None for the automation sensor."""
    if tags.get(TRIGGER_TAG) in TRIGGERS:
        return tags[TRIGGER_TAG]  # type: ignore[return-value]
    sensor = tags.get("dagster/sensor_name")
    if sensor == f"{suite}_cases":
        return "sensor"
    if sensor == AUTOMATION_SENSOR or _AUTOMATION_TAG in tags:
        return None
    if "dagster/schedule_name" in tags:
        return "nightly"
    return "ui"


def report_trigger(context: dg.AssetExecutionContext, suite: str) -> Trigger:
    """cli, nightly, sensor or ui. The report follows its grades through the automation
    sensor, so an automated report takes the trigger of the run that last wrote grades: the
    cases sensor's run, a UI launch, or the nightly pass (the layers' only automation)."""
    direct = _launched_by(context.run.tags, suite)
    if direct is not None:
        return direct
    event = context.instance.get_latest_materialization_event(dg.AssetKey([suite, "grades"]))
    run = context.instance.get_run_by_id(event.run_id) if event is not None else None
    upstream = _launched_by(run.tags, suite) if run is not None else None
    return upstream or "nightly"


def regression_check_spec(suite: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        REGRESSION_CHECK,
        asset=dg.AssetKey([suite, "eval_report"]),
        description="Fails when an agent's pass rate drops with McNemar p < 0.05 against the "
        "previous report (the previous nightly for a nightly report), or a required case "
        "(metadata: {required: true}) regresses.",
    )


def regression_check_result(report: EvalReport, required: set[str]) -> dg.AssetCheckResult:
    """The check's result for a report whose `since_previous` is filled."""
    outcome = check_regressions(report.since_previous, required)
    metadata: dict[str, Any] = {}
    comparison = report.since_previous
    if comparison is not None:
        metadata["previous_run"] = str(comparison.before.run_id)
        for a in comparison.agents:
            if a.pass_rate_delta is not None:
                metadata[f"{a.agent}/pass_rate_delta"] = a.pass_rate_delta
            if a.mcnemar is not None:
                metadata[f"{a.agent}/mcnemar_p"] = a.mcnemar.p_exact
            metadata[f"{a.agent}/regressed"] = a.regressed
    if outcome.required_regressions:
        metadata["required_regressed"] = ", ".join(
            f"{c.agent}/{c.test_id}" for c in outcome.required_regressions
        )
    return dg.AssetCheckResult(
        check_name=REGRESSION_CHECK,
        asset_key=dg.AssetKey([report.suite, "eval_report"]),
        passed=outcome.passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=outcome.description,
        metadata=metadata,
    )
