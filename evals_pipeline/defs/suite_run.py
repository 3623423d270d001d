"""Run a whole suite through the asset graph: what `evals-pipeline run` does, in-process or on
the executor EVALS_PIPELINE_EXECUTOR names."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from evals_pipeline.defs.assets import build_suite_assets
from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.executor import executor_name
from evals_pipeline.defs.history import REGRESSION_CHECK, TRIGGER_TAG
from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.gc_pause import start_up_over
from evals_pipeline.instance.run_recovery import runner_tags
from evals_pipeline.instance.run_tags import REPORT_AGENTS_TAG, eval_run_tags
from evals_pipeline.made_ahead import close_unclaimed
from evals_pipeline.models.report import EvalReport
from evals_pipeline.progress import listening, record_event
from evals_pipeline.progress_bars import PlainProgress, ProgressDisplay
from evals_pipeline.run_ranges import contiguous_ranges
from evals_pipeline.storage.root import open_root
from evals_pipeline.suites import LoadedSuite, RunOptions, load_suite


@dataclass(frozen=True)
class SuiteRun:
    report: EvalReport
    report_folder: Path
    run_ids: list[str]
    regression_check: dg.AssetCheckEvaluation | None = None


class _DisplayHandler(logging.Handler):
    """Hands the layers' logged progress events (unless the display hears every event by
    `listening`) and other lines (warnings) to the run's display, without Dagster's job, run id
    and step prefix."""

    def __init__(self, display: ProgressDisplay, *, events: bool) -> None:
        super().__init__(logging.INFO)
        self.display = display
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        event = record_event(record)
        if event is not None:
            if self.events:
                self.display.event(event)
            return
        meta = getattr(record, "dagster_meta", None) or {}
        self.display.message(str(meta.get("orig_message") or record.getMessage()))


def progress_logger(display: ProgressDisplay, *, events: bool = True) -> dg.LoggerDefinition:
    """A logger showing the layers' own progress and warnings on `display`, not Dagster's
    event stream; with `events` False it shows only the warnings."""

    @dg.logger
    def progress(_: dg.InitLoggerContext) -> logging.Logger:
        log = logging.Logger("evals_pipeline.progress", logging.INFO)  # one per run, unshared
        log.addHandler(_DisplayHandler(display, events=events))
        return log

    return progress


@dataclass(frozen=True)
class SuiteAssets:
    """A suite's assets as `run_suite`'s three jobs take them."""

    layers: list[dg.AssetsDefinition]
    pairwise: list[dg.AssetsDefinition]
    report: dg.AssetsDefinition

    @classmethod
    def of(cls, suite: LoadedSuite) -> SuiteAssets:
        *graph, report = build_suite_assets(suite)
        pairwise = [a.key.path[-1] == "pairwise_verdicts" for a in graph]
        return cls(
            [a for a, p in zip(graph, pairwise, strict=True) if not p],
            [a for a, p in zip(graph, pairwise, strict=True) if p],
            report,
        )


def run_definitions(
    suite: LoadedSuite,
    storage_root: str,
    display: ProgressDisplay | None = None,
    assets: SuiteAssets | None = None,
) -> dg.Definitions:
    """The jobs `run_suite` runs (layers, pairwise, report) with the shared resources and the
    executor EVALS_PIPELINE_EXECUTOR names (defs/executor.py). With `display` (an in-process
    run), the display hears every progress event by `listening`, so the logger leaves them out."""
    assets = assets or SuiteAssets.of(suite)
    jobs = [
        dg.define_asset_job("layers", selection=[a.key for a in assets.layers]),
        dg.define_asset_job("report", selection=[assets.report.key]),
    ]
    if assets.pairwise:  # a job needs a non-empty selection
        jobs.append(dg.define_asset_job("pairwise", selection=[a.key for a in assets.pairwise]))
    return dg.Definitions.merge(
        build_definitions([], storage_root),
        dg.Definitions(
            assets=[*assets.layers, *assets.pairwise, assets.report],
            jobs=jobs,
            loggers={
                "progress": progress_logger(display or PlainProgress(), events=display is None)
            },
        ),
    )


def reconstruct_run_job(
    suite_path: str,
    storage_root: str,
    job_name: str,
    workers: int | None = None,
    targets_file: str | None = None,
) -> dg.JobDefinition:
    """One of `run_suite`'s jobs rebuilt from its suite file: what another process (a celery
    worker, perhaps on another host) runs; its progress lines go to that process's stderr.
    `workers` carries a `--workers` override and `targets_file` a `--targets`, which live in
    the caller's memory only."""
    suite = load_suite(suite_path, Path(targets_file) if targets_file else None)
    if workers:
        suite.suite.execution.workers = workers
    return run_definitions(suite, storage_root).resolve_job_def(job_name)


def _execute(
    defs: dg.Definitions,
    suite: LoadedSuite,
    storage_root: str,
    job_name: str,
    *,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any],
    tags: dict[str, str],
    run_id: str | None = None,
) -> dg.ExecuteInProcessResult | dg.JobExecutionResult:
    """Run one job (as run `run_id`, when given): in this process (the default executor), else
    through `execute_job` on a reconstructable pointer, which the executor hands to its
    workers."""
    if executor_name() == "in_process":
        try:
            return defs.resolve_job_def(job_name).execute_in_process(
                instance=instance, run_config=run_config, tags=tags, run_id=run_id
            )
        finally:
            close_unclaimed()
    job = dg.build_reconstructable_job(
        __name__,
        reconstruct_run_job.__name__,
        reconstructable_kwargs={
            "suite_path": str(suite.path.resolve()),
            "storage_root": storage_root,
            "job_name": job_name,
            "workers": suite.suite.execution.workers,
            "targets_file": str(suite.targets_given) if suite.targets_given else None,
        },
    )
    with dg.execute_job(
        job, instance=instance, run_config=run_config, tags=tags, raise_on_error=True
    ) as result:
        return result


def run_suite(
    instance: dg.DagsterInstance,
    suite: LoadedSuite,
    storage_root: str,
    *,
    agents: list[str],
    case_keys: list[str],
    options: RunOptions | None = None,
    echo: Callable[[str], None] = print,
    display: ProgressDisplay | None = None,
    trigger: str = "cli",
    first_run_id: str | None = None,
) -> SuiteRun:
    """Materialize every layer for `case_keys` x `agents`, then the report, on the executor
    EVALS_PIPELINE_EXECUTOR names (in-process by default); the layers' progress goes to
    `display` (default: plain lines on stderr; on celery, the workers' stderr), and every run
    is tagged with `trigger` (the report's `trigger`, see defs/history.py). `first_run_id`: the
    id of the first run, whose agents the caller started ahead (layers/agent_runs_ahead.py)."""
    display = display or PlainProgress()
    with listening(display.event):
        return _run_jobs(
            instance,
            suite,
            storage_root,
            agents,
            case_keys,
            options,
            echo,
            display,
            trigger,
            first_run_id,
        )


def _run_jobs(
    instance: dg.DagsterInstance,
    suite: LoadedSuite,
    storage_root: str,
    agents: list[str],
    case_keys: list[str],
    options: RunOptions | None,
    echo: Callable[[str], None],
    display: ProgressDisplay,
    trigger: str,
    first_run_id: str | None,
) -> SuiteRun:
    order = register_cases(instance, suite, case_keys)
    assets = SuiteAssets.of(suite)
    defs = run_definitions(suite, storage_root, display, assets)
    start_up_over()  # imports and definitions are done: the cases' work begins
    layers, pairwise, report_asset = assets.layers, assets.pairwise, assets.report
    if executor_name() != "in_process":
        echo(f"{suite.slug}: steps run on the {executor_name()} workers (their logs show progress)")
    # Only our logger: the layers' progress lines, not Dagster's event stream.
    run_config: dict[str, Any] = {"loggers": {"progress": {}}}
    cases_op = next(a.op.name for a in layers if a.key.path[-1] == "cases")
    sessions_op = next(a.op.name for a in layers if a.key.path[-1] == "sessions")
    options = options or RunOptions()
    budget = options.budget_usd
    run_ids: list[str] = []
    for group in contiguous_ranges(set(agents), list(suite.targets)):
        echo(f"{suite.slug}: {len(order)} cases x {', '.join(group)}")
        # Agents that are not neighbours run as separate Dagster runs: each gets what the
        # earlier ones left of the run budget.
        config = options.model_copy(update={"budget_usd": budget}).model_dump()
        layers_config = {**run_config, "ops": {cases_op: {"config": config}}}
        result = _execute(
            defs,
            suite,
            storage_root,
            "layers",
            instance=instance,
            run_config=layers_config,
            run_id=None if run_ids else first_run_id,
            tags={
                "dagster/asset_partition_range_start": str(partition_key(order[0], group[0])),
                "dagster/asset_partition_range_end": str(partition_key(order[-1], group[-1])),
                **eval_run_tags([suite.slug], group),
                TRIGGER_TAG: trigger,
                **runner_tags(),
            },
        )
        run_ids.append(result.run_id)
        if budget is not None:
            budget = max(0.0, budget - _agent_cost(result, sessions_op))
    if pairwise and len(agents) > 1:
        echo(f"{suite.slug}: comparing {', '.join(agents)} pairwise on {len(order)} cases")
        result = _execute(
            defs,
            suite,
            storage_root,
            "pairwise",
            instance=instance,
            run_config=run_config,
            tags={
                "dagster/asset_partition_range_start": order[0],
                "dagster/asset_partition_range_end": order[-1],
                **eval_run_tags([suite.slug], agents),
                TRIGGER_TAG: trigger,
                **runner_tags(),
            },
        )
        run_ids.append(result.run_id)
    result = _execute(
        defs,
        suite,
        storage_root,
        "report",
        instance=instance,
        run_config=run_config,
        tags={
            **eval_run_tags([suite.slug], []),
            # `--target`: the report lists the agents this command ran, not others stored.
            **({REPORT_AGENTS_TAG: ",".join(agents)} if options.targets else {}),
            TRIGGER_TAG: trigger,
            **runner_tags(),
        },
    )
    run_ids.append(result.run_id)
    materialization = result.asset_materializations_for_node(report_asset.op.name)[0]
    # The report folder here: on an object-store root, fetched into this process's mirror.
    root = open_root(storage_root)
    folder = root.local_path(str(materialization.metadata["dagster/uri"].value))
    root.fetch(folder)
    report = EvalReport.model_validate_json((folder / "report.json").read_text())
    checks = result.get_asset_check_evaluations()
    return SuiteRun(
        report=report,
        report_folder=folder,
        run_ids=run_ids,
        regression_check=next((c for c in checks if c.check_name == REGRESSION_CHECK), None),
    )


def _agent_cost(
    result: dg.ExecuteInProcessResult | dg.JobExecutionResult, sessions_op: str
) -> float:
    """What a run's agents cost: the sum of its sessions' per-partition `cost_usd`."""
    total = 0.0
    for materialization in result.asset_materializations_for_node(sessions_op):
        cost = materialization.metadata.get("cost_usd")
        if cost is not None and isinstance(cost.value, int | float):
            total += float(cost.value)
    return total
