"""A sensor per suite: new or changed tests appear and run without restarting anything."""

import hashlib
import json
from pathlib import Path

import dagster as dg

from evals_pipeline.dagster_private import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)
from evals_pipeline.defs.partitions import case_partitions_name, partition_key, register_cases
from evals_pipeline.instance.run_tags import eval_run_tags
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.run_ranges import contiguous_ranges
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases
from evals_pipeline.suites.resolution import Resolution, resolve_recorded

Fingerprints = dict[str, dict[str, str]]  # case key -> agent -> content hash


def fingerprints(cases: list[ResolvedCase]) -> Fingerprints:
    out: Fingerprints = {}
    for case in cases:
        out.setdefault(case.case_key, {})[case.agent] = case.content_hash
    return out


def range_request(
    suite: str, agent: str, case_keys: list[str], hashes: dict[str, str]
) -> dg.RunRequest:
    """One run of `agent` over `case_keys` (neighbours in partition order): a single partition,
    or a partition range that the layers' single-run backfill policy does in one step each. The
    run key names the change (each case's content hash), so a re-tick does not launch it twice."""
    tags = eval_run_tags([suite], [agent])
    first, last = case_keys[0], case_keys[-1]
    if len(case_keys) == 1:
        return dg.RunRequest(
            partition_key=partition_key(first, agent),
            run_key=f"{agent}.{first}.{hashes[first]}",
            tags=tags,
        )
    change = hashlib.sha256("\n".join(f"{k}={hashes[k]}" for k in case_keys).encode())
    return dg.RunRequest(
        run_key=f"{agent}.{first}..{last}.{len(case_keys)}.{change.hexdigest()[:16]}",
        tags={
            **tags,
            ASSET_PARTITION_RANGE_START_TAG: str(partition_key(first, agent)),
            ASSET_PARTITION_RANGE_END_TAG: str(partition_key(last, agent)),
        },
    )


def changed_runs(
    suite: str, agents: list[str], current: Fingerprints, previous: Fingerprints, order: list[str]
) -> list[dg.RunRequest]:
    """The runs of the case x agent pairs whose hash changed: per agent (the suite's order
    first), one run per range of neighbours in partition `order`."""
    runs = []
    seen_agents = [a for by_agent in current.values() for a in by_agent]
    for agent in dict.fromkeys([*agents, *seen_agents]):
        hashes = {case: by_agent[agent] for case, by_agent in current.items() if agent in by_agent}
        changed = {
            case
            for case, content_hash in hashes.items()
            if previous.get(case, {}).get(agent) != content_hash
        }
        # A test that names its own targets leaves gaps in other agents' partitions; a range
        # may span them (the layers skip pairs the suite does not run).
        agent_order = [k for k in order if k in hashes]
        runs += [
            range_request(suite, agent, case_keys, hashes)
            for case_keys in contiguous_ranges(changed, agent_order)
        ]
    return runs


def build_cases_sensor(
    suite: str,
    path: Path,
    agents: list[str],
    layers: list[dg.AssetKey],
    resolution: Resolution | None = None,
) -> dg.SensorDefinition:
    """Registers the suite's cases as dynamic partitions (one add call per tick) and requests runs of
    new or changed ones, batched: one run per agent and range of neighbouring partitions, as a
    backfill would; the cursor keeps each case's content hash.

    `resolution`: the suite's cases as the code location resolved them (every agent's, so
    `agents` are all the suite's). A tick reuses the last resolution while it still holds for
    the suite as loaded now (suites/resolution.py) and keeps each new one; it loads the suite
    again only when a file, folder or setting its last load read has changed."""
    partitions_name = case_partitions_name(suite)
    kept = [resolution] if resolution is not None else []

    @dg.sensor(
        name=f"{suite}_cases",
        minimum_interval_seconds=30,
        target=dg.AssetSelection.assets(*layers),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Watches {path.name} for new, changed and removed tests.",
    )
    def cases_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        try:
            # The suite as last loaded, while what that load read is unchanged (loader.py).
            unchanged = kept and kept[0].loaded.inputs_hold()
            loaded = kept[0].loaded if unchanged else load_suite(path)
            if kept and kept[0].holds_for(loaded):
                current = kept[0].content_hashes()
            elif list(loaded.targets) == agents:  # every agent's cases are the sensor's
                kept[:] = [resolve_recorded(loaded)]
                current = kept[0].content_hashes()
            else:
                kept[:] = []
                current = fingerprints(resolve_cases(loaded, agents=agents))
        except SuiteError as exc:
            return dg.SkipReason(f"{path} does not load:\n{exc}")
        previous: Fingerprints | None = json.loads(context.cursor) if context.cursor else None
        registered = list(context.instance.get_dynamic_partitions(partitions_name))
        # Registered here, not requested of the daemon: only registration adds case partitions
        # (instance/registration.py). New keys join in the suite's order.
        order = register_cases(context.instance, suite, list(current))
        runs = []
        if previous is not None:
            runs = changed_runs(suite, agents, current, previous, order)
        cursor = json.dumps(current, sort_keys=True)
        if order == registered and not runs and cursor == context.cursor:
            return dg.SkipReason(f"no new or changed tests in {path.name}")
        return dg.SensorResult(run_requests=runs, cursor=cursor)

    return cases_sensor
