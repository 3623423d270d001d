"""A sensor per suite: new or changed tests appear and run without restarting anything."""

import json
from pathlib import Path

import dagster as dg

from evals_pipeline.defs.partitions import case_partitions_name, partition_key
from evals_pipeline.defs.run_tags import eval_run_tags
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases

Fingerprints = dict[str, dict[str, str]]  # case key -> agent -> content hash


def fingerprints(cases: list[ResolvedCase]) -> Fingerprints:
    out: Fingerprints = {}
    for case in cases:
        out.setdefault(case.case_key, {})[case.agent] = case.content_hash
    return out


def build_cases_sensor(
    suite: str, path: Path, agents: list[str], layers: list[dg.AssetKey]
) -> dg.SensorDefinition:
    """Registers the suite's cases as dynamic partitions (one call per tick) and requests runs of
    new or changed ones; the cursor keeps each case's content hash."""
    partitions_name = case_partitions_name(suite)

    @dg.sensor(
        name=f"{suite}_cases",
        minimum_interval_seconds=30,
        target=dg.AssetSelection.assets(*layers),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Watches {path.name} for new, changed and removed tests.",
    )
    def cases_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            current = fingerprints(resolve_cases(load_suite(path), agents=agents))
        except SuiteError as exc:
            return dg.SkipReason(f"{path} does not load:\n{exc}")
        previous: Fingerprints | None = json.loads(context.cursor) if context.cursor else None
        registered = set(context.instance.get_dynamic_partitions(partitions_name))
        added = sorted(set(current) - registered)
        removed = sorted(registered - set(current))
        partition_requests: list[
            dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest
        ] = []
        if added:
            partition_requests.append(dg.AddDynamicPartitionsRequest(partitions_name, added))
        if removed:
            partition_requests.append(dg.DeleteDynamicPartitionsRequest(partitions_name, removed))
        runs = []
        if previous is not None:
            for case_key, by_agent in current.items():
                for agent, content_hash in by_agent.items():
                    if previous.get(case_key, {}).get(agent) != content_hash:
                        runs.append(
                            dg.RunRequest(
                                partition_key=partition_key(case_key, agent),
                                run_key=f"{agent}.{case_key}.{content_hash}",
                                tags=eval_run_tags([suite], [agent]),
                            )
                        )
        cursor = json.dumps(current, sort_keys=True)
        if not partition_requests and not runs and cursor == context.cursor:
            return dg.SkipReason(f"no new or changed tests in {path.name}")
        return dg.SensorResult(
            run_requests=runs, dynamic_partitions_requests=partition_requests, cursor=cursor
        )

    return cases_sensor
