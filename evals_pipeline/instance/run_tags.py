"""The suite and agent tags every run carries, whoever started it (a sensor, a backfill, the
nightly automation, the UI, the CLI), so runs can be filtered by them and the run queue can
limit them (`tag_concurrency_limits` on `evals/agent`, docs/deployment.md).

Runs submitted to the instance get their tags from `EvalRunCoordinator`, the run queue of the
shipped dagster.yaml (instance/run_coordinator.py), before the queue looks at them;
`evals-pipeline run` sets the same tags on its in-process runs (defs/suite_run.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from evals_pipeline.dagster_private import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)
from evals_pipeline.defs.partitions import AGENT, split_key

SUITE_TAG = "evals/suite"
AGENT_TAG = "evals/agent"
"""Set only when the run covers one agent: the key per-agent run limits apply to."""
AGENTS_TAG = "evals/agents"
"""Every agent the run covers, comma-separated in the suite's order."""
REPORT_AGENTS_TAG = "evals/report_agents"
"""Set on the report run of `evals-pipeline run --target`: the only agents its report lists, so
stored results of the others are not shown as if this run had made them."""

REPORT_CASES_TAG = "evals/report_cases"
"""Set on the report run of `evals-pipeline run --test-id`: the only cases (keys, comma-separated)
its report lists; the suite's other registered cases keep their partitions and results."""

_PARTITION = "dagster/partition"
_RANGE_START = ASSET_PARTITION_RANGE_START_TAG
_RANGE_END = ASSET_PARTITION_RANGE_END_TAG


def eval_run_tags(suites: Sequence[str], agents: Sequence[str]) -> dict[str, str]:
    """The tags of a run of `suites`' assets over `agents` (either may be empty)."""
    tags: dict[str, str] = {}
    if suites:
        tags[SUITE_TAG] = ",".join(dict.fromkeys(suites))
    unique = list(dict.fromkeys(agents))
    if unique:
        tags[AGENTS_TAG] = ",".join(unique)
    if len(unique) == 1:
        tags[AGENT_TAG] = unique[0]
    return tags


def report_agents(tags: Mapping[str, str], agents: Sequence[str]) -> list[str]:
    """The agents a report run lists: those REPORT_AGENTS_TAG names, in the suite's order, or
    every agent of the suite when the tag is absent."""
    named = tags.get(REPORT_AGENTS_TAG)
    if not named:
        return list(agents)
    chosen = set(named.split(","))
    return [a for a in agents if a in chosen]


def report_cases(tags: Mapping[str, str]) -> frozenset[str] | None:
    """The cases a report run lists: those REPORT_CASES_TAG names, or None (every registered
    case) when the tag is absent."""
    named = tags.get(REPORT_CASES_TAG)
    return frozenset(named.split(",")) if named else None


def run_suites(run: dg.DagsterRun) -> list[str]:
    """The suites whose assets (or asset checks) the run materializes: their keys' first part."""
    keys = [*(run.asset_selection or []), *(c.asset_key for c in run.asset_check_selection or [])]
    return sorted({key.path[0] for key in keys if len(key.path) > 1})


def range_agents(tags: Mapping[str, str], range_keys: Sequence[str] | None = None) -> list[str]:
    """The agents of the run's partitions, from Dagster's partition tags: the single partition's,
    else those of `range_keys` (every key of the range), else the range's two ends."""
    if f"{_PARTITION}/{AGENT}" in tags:
        return [tags[f"{_PARTITION}/{AGENT}"]]
    keys: Sequence[str] = []
    if _PARTITION in tags:
        keys = [tags[_PARTITION]]
    elif range_keys:
        keys = range_keys
    elif _RANGE_START in tags and _RANGE_END in tags:
        keys = [tags[_RANGE_START], tags[_RANGE_END]]
    return [split_key(key)[1] for key in keys if "|" in key]
