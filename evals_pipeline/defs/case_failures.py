"""The `failures` asset: one partition per case x agent whose latest verdict is fail or error, so
the failing cases are a node of the asset graph and a list in its partitions view, not a green
`grades` partition with a red check three clicks away (docs/dagster-ui.md).

Dagster marks a partition failed only when the run that planned it failed, and a batched step
cannot fail one partition of many; so the failures are an asset of their own. It is external (no
step makes it, nobody launches it): the step that makes `grades` records each failing case as a
materialization of its partition, and takes a case that passes again off the list.

Its check `every_case_passes` fails (severity ERROR) while the list is not empty, so the node
is red in the graph whichever partition was graded last; the step reports it after each change,
and running the check from the UI evaluates the list as it stands."""

# No `from __future__ import annotations`: Dagster compares the check's `context` annotation with
# its class, not a string.

from collections.abc import Sequence
from typing import Any

import dagster as dg

from evals_pipeline.defs.case_checks import case_check
from evals_pipeline.defs.partitions import failures_partitions_name, partition_key
from evals_pipeline.models.grade import CaseGrade

FAILURES = "failures"
EVERY_CASE_PASSES = "every_case_passes"
LISTED_IN_CHECK = 50
"""Failing cases named in the check's metadata; the partitions view lists them all."""


def failures_spec(suite: str) -> dg.AssetSpec:
    """The suite's `failures` asset, downstream of its grades."""
    return dg.AssetSpec(
        [suite, FAILURES],
        deps=[dg.AssetKey([suite, "grades"])],
        partitions_def=dg.DynamicPartitionsDefinition(name=failures_partitions_name(suite)),
        description=(
            "The cases that did not pass: one partition per case x agent whose latest verdict "
            "is fail or error (key `agent|case`), with the reason, score and threshold; a case "
            "that passes again leaves the list. Recorded by the step that makes `grades`."
        ),
    )


def failures_check(suite: str) -> dg.AssetChecksDefinition:
    """The check that the suite's failures list is empty."""

    @dg.asset_check(
        asset=dg.AssetKey([suite, FAILURES]),
        name=EVERY_CASE_PASSES,
        description=(
            "No case x agent is failing: fails (severity ERROR) while `failures` lists any, "
            "naming them in its metadata."
        ),
    )
    def every_case_passes(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        listed = context.instance.get_dynamic_partitions(failures_partitions_name(suite))
        return dg.AssetCheckResult(**_verdict(listed))

    return every_case_passes


def _verdict(listed: Sequence[str]) -> dict[str, Any]:
    """The check's result for the failing keys `listed`."""
    count = len(listed)
    shown = ", ".join(listed[:LISTED_IN_CHECK]) + (" ..." if count > LISTED_IN_CHECK else "")
    return {
        "passed": not listed,
        "severity": dg.AssetCheckSeverity.ERROR,
        "description": f"{count} case(s) did not pass" if listed else "every case passed",
        "metadata": {"failing": count, **({"cases": shown} if listed else {})},
    }


def record_failures(
    context: dg.AssetExecutionContext, graded: Sequence[CaseGrade], suite: str
) -> None:
    """Each failing grade of `graded` as a materialization of its `failures` partition; each
    passing one off the list."""
    instance, name = context.instance, failures_partitions_name(suite)
    listed = set(instance.get_dynamic_partitions(name))
    by_key = {str(partition_key(g.case_key, g.agent)): g for g in graded}
    for key, grade in by_key.items():
        if grade.verdict == "pass" and key in listed:
            instance.delete_dynamic_partition(name, key)
    failing = {k: g for k, g in by_key.items() if g.verdict != "pass"}
    new = [k for k in failing if k not in listed]
    if new:
        instance.add_dynamic_partitions(name, new)
    asset_key = dg.AssetKey([suite, FAILURES])
    for key, grade in failing.items():
        _, reason, metadata = case_check(grade)
        context.log_event(
            dg.AssetMaterialization(asset_key, partition=key, description=reason, metadata=metadata)
        )
    listed_now = instance.get_dynamic_partitions(name)
    context.log_event(
        dg.AssetCheckEvaluation(
            asset_key=asset_key, check_name=EVERY_CASE_PASSES, **_verdict(listed_now)
        )
    )
