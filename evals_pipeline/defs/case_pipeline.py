"""`cases`, `agent_runs`, `sessions` and `grades` of a suite as one multi-asset: a step resolves
its cases, runs each case's agent, makes its session and grades the case as its trials end
(layers/case_pipeline.py). The cases go straight to the agents, not through a step of their own
and the stored records (start-up: no step, no write and read back before the first agent). A
subset re-makes only what it selects from the stored records before it: `grades` alone
re-grades the stored sessions, `sessions` and `grades` re-read the stored agent runs."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from evals_pipeline.defs.case_checks import case_check_evaluations, case_passes_spec
from evals_pipeline.defs.case_failures import record_failures
from evals_pipeline.defs.io_manager import keyed, load_records
from evals_pipeline.defs.partition_metadata import (
    add_partition_metadata,
    grade_metadata,
    run_metadata,
    session_metadata,
)
from evals_pipeline.defs.partitions import case_partitions_name, split_key
from evals_pipeline.defs.pools import agent_pool
from evals_pipeline.defs.resources import EvalStorage
from evals_pipeline.defs.settings_resource import EvalsSettings
from evals_pipeline.layers import enrich_runs, grade_cases, run_case_pipeline
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.progress import logging_progress
from evals_pipeline.suites import LoadedSuite, RunOptions, SuiteError, run_cases

LAYERS = ("cases", "agent_runs", "sessions", "grades")
"""The layers of the multi-asset, in the order each is made from the one before."""

DESCRIPTIONS = {
    "cases": "The frozen spec of each test as each agent receives it, re-read from the suite "
    "file (with the run's options, e.g. `--threshold`, laid over it).",
    "agent_runs": "Each agent run in a fresh workspace: stdout, stderr, exit code, timing, "
    "timeouts.",
    "sessions": "Each run as a canonical session; messages stored once as Parquet.",
    "grades": "Every grader's verdict on each session, and the case verdict they add up to; each "
    "partition shows its verdict, score, cost, tokens and duration, and `case_passes` fails for "
    "the cases that did not pass.",
}

METADATA: dict[str, Callable[[list[Any]], dict[str, Any]]] = {
    "cases": lambda group: {},
    "agent_runs": run_metadata,
    "sessions": session_metadata,
    "grades": lambda group: grade_metadata(group[0]),
}


class CaseOptions(dg.Config):
    """Launch-time options of the cases layer (RunOptions as Dagster config, so a UI launch or
    `dagster asset materialize --config` can set them as `evals-pipeline run` does)."""

    threshold: float | None = None
    keep_workspaces: bool = False
    cache: bool = True
    agentv_scoring: bool = False
    targets: list[str] | None = None
    budget_usd: float | None = None


def build_case_pipeline(loaded: LoadedSuite, layer: Mapping[str, Any]) -> dg.AssetsDefinition:
    """The multi-asset of `loaded`'s cases, agent runs, sessions and grades, with the partitions,
    code version and backfill policy of its other layers (`layer`); the translator gives their
    group and automation (defs/translator.py)."""
    suite = loaded.slug
    keys = {name: dg.AssetKey([suite, name]) for name in LAYERS}
    cases_key = dg.AssetKey([suite, "cases"])
    # The lineage inside the step, as the graph shows it: cases -> agent_runs -> sessions -> grades.
    deps: dict[str, list[dg.AssetKey]] = {
        "cases": [],
        "agent_runs": [cases_key],
        "sessions": [keys["agent_runs"]],
        "grades": [cases_key, keys["sessions"]],
    }
    specs = [
        dg.AssetSpec(
            keys[name],
            deps=deps[name],
            description=DESCRIPTIONS[name],
            code_version=layer["code_version"],
            kinds={"yaml"} if name == "cases" else None,
        ).with_io_manager_key(layer["io_manager_key"])
        for name in LAYERS
    ]
    partitions = layer["partitions_def"]

    @dg.multi_asset(
        name=f"{suite}__case_pipeline",
        specs=specs,
        partitions_def=partitions,
        backfill_policy=layer["backfill_policy"],
        pool=agent_pool(loaded),
        can_subset=True,
        check_specs=[case_passes_spec(keys["grades"], partitions)],
    )
    def case_pipeline(
        context: dg.AssetExecutionContext,
        config: CaseOptions,
        storage: EvalStorage,
        settings: EvalsSettings,
    ) -> Iterator[dg.Output[Any] | dg.AssetCheckEvaluation]:
        """Each case, its agent runs, their sessions and its grade, for the layers selected."""
        wanted = {key.path[-1] for key in context.selected_asset_keys}
        # The sandbox, the workspace-state cap, the agents' folder and the child ledger take
        # the resource's settings, as this process resolved them (Settings.current).
        with settings.settings().use():
            made = _make(context, storage, loaded, RunOptions(**config.model_dump()), wanted)
        yield from _outputs(context, keys, made)

    return case_pipeline


def _make(
    context: dg.AssetExecutionContext,
    storage: EvalStorage,
    loaded: LoadedSuite,
    options: RunOptions,
    wanted: set[str],
) -> dict[str, list[Any]]:
    """The records of each layer in `wanted`, by layer: the cases from the suite file when
    `cases` is wanted, else its stored ones; the rest made through the agents when
    `agent_runs` is wanted, else from the stored records of the layer before."""
    suite, run_id = loaded.slug, context.run.run_id
    workers = loaded.suite.execution.workers
    store = storage.results(suite, run_id)
    progress = logging_progress(context.log)

    def folder_of(name: str) -> Path:
        return storage.step_folder(dg.AssetKey([suite, name]), run_id)

    def stored(name: str) -> list[Any]:
        partitions = [str(key) for key in context.partition_keys]
        return load_records(context.instance, storage.root, dg.AssetKey([suite, name]), partitions)

    made: dict[str, list[Any]] = {}
    if "cases" in wanted:
        made["cases"] = _resolved_cases(context, loaded, options)
    if wanted & {"agent_runs", "grades"}:
        cases: list[ResolvedCase] = made["cases"] if "cases" in made else stored("cases")
    if "agent_runs" in wanted:
        results = run_case_pipeline(
            _in_suite_order(context, loaded, cases),
            folder_of,
            workers=workers,
            sessions="sessions" in wanted,
            grades="grades" in wanted,
            progress=progress,
            run_id=run_id,
            git_cache=storage.storage.local / "git-cache",
            store=store,
        )
        layers: dict[str, list[Any]] = {
            "agent_runs": results.runs,
            "sessions": results.sessions,
        }
        made.update({name: layers[name] for name in layers if name in wanted})
        if "grades" in wanted:
            made["grades"] = results.grades
        return made
    if "sessions" in wanted:
        made["sessions"] = enrich_runs(stored("agent_runs"), folder_of("sessions"), store)
    if "grades" in wanted:
        sessions = made["sessions"] if "sessions" in made else stored("sessions")
        made["grades"] = grade_cases(
            cases, sessions, workers=workers, progress=progress, store=store
        )
    return made


def _resolved_cases(
    context: dg.AssetExecutionContext, loaded: LoadedSuite, options: RunOptions
) -> list[ResolvedCase]:
    """The run's cases of the step's partitions, the suite re-read from its file with `options`
    laid over it; a partition no longer in the file fails the step."""
    path = loaded.path
    try:
        resolved = {
            (c.case_key, c.agent): c for c in run_cases(path, options, loaded.targets_given)
        }
    except SuiteError as exc:
        raise dg.Failure(f"{path} no longer loads:\n{exc}") from exc
    tests = {case_key for case_key, _ in resolved}
    out: list[ResolvedCase] = []
    for key in context.partition_keys:
        case_key, agent = split_key(key)
        if (case_key, agent) not in resolved:
            if case_key in tests:  # the test names its own targets: not this pair
                continue
            raise dg.Failure(
                f"case {case_key!r} for agent {agent!r} is not in {path} any more; the "
                f"{loaded.slug}_cases sensor (or `evals-pipeline register`) removes stale "
                "partitions."
            )
        out.append(resolved[(case_key, agent)])
    return out


def _in_suite_order(
    context: dg.AssetExecutionContext, loaded: LoadedSuite, cases: list[ResolvedCase]
) -> list[ResolvedCase]:
    """`cases` test by test in the order the suite registers them, each over its agents in
    the suite's order, as `evals-pipeline run` resolves them: the run's agents share a run
    budget, and the loaded records come agent by agent."""
    registered = context.instance.get_dynamic_partitions(case_partitions_name(loaded.slug))
    test_rank = {key: i for i, key in enumerate(registered)}
    agent_rank = {agent: i for i, agent in enumerate(loaded.targets)}
    return sorted(
        cases,
        key=lambda c: (
            test_rank.get(c.case_key, len(test_rank)),
            agent_rank.get(c.agent, len(agent_rank)),
        ),
    )


def _outputs(
    context: dg.AssetExecutionContext,
    keys: dict[str, dg.AssetKey],
    made: dict[str, list[Any]],
) -> Iterator[dg.Output[Any] | dg.AssetCheckEvaluation]:
    """One output per layer made, each partition with its own metadata; the `case_passes`
    evaluations after the grades they check, and the failing cases on the `failures` list."""
    for name in LAYERS:
        if name not in made:
            continue
        add_partition_metadata(context, made[name], METADATA[name], keys[name])
        output = context.assets_def.get_output_name_for_asset_key(keys[name])
        yield dg.Output(keyed(made[name]), output_name=output)
        if name == "grades":
            yield from case_check_evaluations(context, made[name], keys[name])
            record_failures(context, made[name], keys[name].path[0])
