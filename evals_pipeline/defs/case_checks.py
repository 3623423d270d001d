"""The `case_passes` asset check: each case x agent partition of `grades` is checked, so a failed
or errored case is a failed (red, alertable) check in the Dagster UI, not a green materialization.

The check is partitioned like `grades` and evaluated in the step that makes `grades` (with the
agent runs and sessions: defs/case_pipeline.py). A batched step covers many partitions, and Dagster 1.13's `AssetCheckResult` names no partition (it takes the
run's single partition key, if any), so the step yields one `AssetCheckEvaluation` per partition,
each pointing at that partition's new materialization (docs/dagster-ui.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import dagster as dg

# A check evaluation names the materialization it checked, so the UI shows it as current for
# that partition (Dagster does not re-export the type).
from evals_pipeline.dagster_private import AssetCheckEvaluationTargetMaterializationData
from evals_pipeline.defs.io_manager import latest_materializations
from evals_pipeline.defs.partitions import partition_key
from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.reporting.case_lines import failure_reason

CASE_PASSES = "case_passes"


def case_passes_spec(
    asset_key: dg.AssetKey, partitions: dg.PartitionsDefinition
) -> dg.AssetCheckSpec:
    """The check's spec on the grades asset, one result per case x agent partition."""
    return dg.AssetCheckSpec(
        CASE_PASSES,
        asset=asset_key,
        partitions_def=partitions,
        description=(
            "The case passed: fails (severity ERROR) when its verdict is fail or error, with the "
            "reason, score and threshold in the result's metadata."
        ),
    )


def case_check(grade: CaseGrade) -> tuple[bool, str, dict[str, Any]]:
    """Whether the case passed, the result's description and its metadata."""
    passed = grade.verdict == "pass"
    reason = "passed" if passed else failure_reason(grade)
    metadata: dict[str, Any] = {
        "verdict": grade.verdict,
        "score": float(grade.score),
        "threshold": float(grade.threshold),
    }
    if not passed:
        metadata["reason"] = reason
    if grade.failure_stage is not None:
        metadata["failure_stage"] = grade.failure_stage
    return passed, reason, metadata


def case_check_evaluations(
    context: dg.AssetExecutionContext, graded: Sequence[CaseGrade], asset_key: dg.AssetKey
) -> Iterator[dg.Output[None] | dg.AssetCheckEvaluation]:
    """One `case_passes` evaluation per graded partition of the grades asset at `asset_key`,
    when the run selected the check; call after the grades output, so each targets its
    partition's new materialization."""
    key = dg.AssetCheckKey(asset_key, CASE_PASSES)
    if key not in context.selected_asset_check_keys:
        return
    # The check's own output, as Dagster yields it for an AssetCheckResult.
    yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(key))
    keys = {str(partition_key(g.case_key, g.agent)): g for g in graded}
    targets = _targets(context, asset_key, list(keys))
    for partition, grade in keys.items():
        passed, description, metadata = case_check(grade)
        yield dg.AssetCheckEvaluation(
            asset_key=asset_key,
            check_name=CASE_PASSES,
            passed=passed,
            metadata=metadata,
            target_materialization_data=targets.get(partition),
            severity=dg.AssetCheckSeverity.ERROR,
            description=description,
            blocking=False,
            partition=partition,
        )


def _targets(
    context: dg.AssetExecutionContext, asset_key: dg.AssetKey, partitions: list[str]
) -> dict[str, AssetCheckEvaluationTargetMaterializationData]:
    """Each partition's newest materialization, the one the step just stored: as our event log
    stored it in this process when it can tell (reading 10,000 events back to learn their ids
    cost ~3 ms a case), else read from the instance."""
    run_id = context.run.run_id
    storage = context.instance.event_log_storage
    found: dict[str, tuple[int, str, float]] = {}  # partition -> storage id, run id, time
    if isinstance(storage, BatchingSqliteEventLogStorage):
        stored = storage.stored_materializations(run_id, asset_key)
        found = {p: (m.storage_id, run_id, m.timestamp) for p, m in stored.items()}
    missing = [p for p in partitions if p not in found]
    if missing:
        records = latest_materializations(context.instance, asset_key, missing)
        found |= {p: (r.storage_id, r.run_id, r.timestamp) for p, r in records.items()}
    return {
        partition: AssetCheckEvaluationTargetMaterializationData(
            storage_id=storage_id, run_id=target_run, timestamp=timestamp
        )
        for partition, (storage_id, target_run, timestamp) in found.items()
    }
