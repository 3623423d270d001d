"""Run a whole suite through the asset graph: what `evals-pipeline run` does, in-process or on
the executor EVALS_PIPELINE_EXECUTOR names."""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from evals_pipeline.defs.assets import build_suite_assets
from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.executor import count_stopped_elsewhere, in_process_executor
from evals_pipeline.defs.history import REGRESSION_CHECK, TRIGGER_TAG
from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.defs.settings_resource import run_settings, settings_run_config
from evals_pipeline.gc_pause import start_up_over
from evals_pipeline.instance.run_recovery import runner_tags
from evals_pipeline.instance.run_tags import REPORT_AGENTS_TAG, REPORT_CASES_TAG, eval_run_tags
from evals_pipeline.models.report import EvalReport
from evals_pipeline.progress import listening, record_event
from evals_pipeline.progress_bars import PlainProgress, ProgressDisplay
from evals_pipeline.progress_relay import ProgressRelay, relay_to
from evals_pipeline.reaping.prctl import die_with_parent_process
from evals_pipeline.run_ranges import contiguous_ranges
from evals_pipeline.settings import Settings
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


def progress_logger(
    display: ProgressDisplay | None, progress_to: str | None = None
) -> dg.LoggerDefinition:
    """A logger showing the layers' warnings on `display` (default: plain lines on stderr) and
    their progress too, unless `display` hears every event by `listening` (given) or each
    step's events go to the command's relay at `progress_to` (progress_relay.py)."""

    @dg.logger
    def progress(_: dg.InitLoggerContext) -> logging.Logger:
        # Made as each step begins, in its process: a celery worker keeps the job it rebuilt
        # for the run's next steps, so each step reaches the relay here, not as it is rebuilt.
        relayed = relay_to(progress_to) if progress_to else False
        log = logging.Logger("evals_pipeline.progress", logging.INFO)  # one per run, unshared
        log.addHandler(
            _DisplayHandler(display or PlainProgress(), events=display is None and not relayed)
        )
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
        pairwise = [any(k.path[-1] == "pairwise_verdicts" for k in a.keys) for a in graph]
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
    progress_to: str | None = None,
) -> dg.Definitions:
    """The jobs `run_suite` runs (layers, pairwise, report) with the shared resources and the
    executor EVALS_PIPELINE_EXECUTOR names (defs/executor.py). With `display` (an in-process
    run), the display hears every progress event by `listening`, so the logger leaves them out,
    as it does for a step whose events reach the command's relay at `progress_to`."""
    assets = assets or SuiteAssets.of(suite)
    jobs = [
        dg.define_asset_job("layers", selection=[k for a in assets.layers for k in a.keys]),
        dg.define_asset_job("report", selection=[assets.report.key]),
    ]
    if assets.pairwise:  # a job needs a non-empty selection
        jobs.append(
            dg.define_asset_job("pairwise", selection=[k for a in assets.pairwise for k in a.keys])
        )
    return dg.Definitions.merge(
        build_definitions([], storage_root),
        dg.Definitions(
            assets=[*assets.layers, *assets.pairwise, assets.report],
            jobs=jobs,
            loggers={"progress": progress_logger(display, progress_to)},
        ),
    )


def reconstruct_run_job(
    suite_path: str,
    storage_root: str,
    job_name: str,
    workers: int | None = None,
    targets_file: str | None = None,
    settings: dict[str, str] | None = None,
    progress_to: str | None = None,
) -> dg.JobDefinition:
    """One of `run_suite`'s jobs rebuilt from its suite file: what another process (a step's,
    a celery worker's, perhaps on another host) runs. Each step's progress events go to the
    command's relay at `progress_to` (progress_relay.py), or, where that cannot be reached
    (another host), as lines to its own stderr. `workers` carries a `--workers` override and
    `targets_file` a `--targets`, which live in the caller's memory only, and `settings` the
    caller's settings (settings_run_config)."""
    # A step process of a multiprocess run ends with the command that started it, even one
    # killed outright (its agents and graders end with it: process.py).
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        die_with_parent_process(parent.pid)
    # A worker's entry: its environment's settings, read once, under the run's own (a worker
    # serves runs of many commands), are its process's (settings.py).
    Settings.install(Settings.from_env().model_copy(update=settings or {}))
    suite = load_suite(suite_path, Path(targets_file) if targets_file else None)
    if workers:
        suite.suite.execution.workers = workers
    defs = run_definitions(suite, storage_root, progress_to=progress_to)
    return defs.resolve_job_def(job_name)


def _execute(
    defs: dg.Definitions,
    suite: LoadedSuite,
    storage_root: str,
    job_name: str,
    *,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any],
    tags: dict[str, str],
) -> dg.ExecuteInProcessResult | dg.JobExecutionResult:
    """Run one job: a job whose executor runs its steps in this process runs here, with the
    display hearing its events; any other executor gets a reconstructable pointer to hand to
    its workers. Either way the steps run the same code."""
    job_def = defs.resolve_job_def(job_name)
    if job_def.executor_def is in_process_executor():
        return job_def.execute_in_process(instance=instance, run_config=run_config, tags=tags)
    # The steps' progress reaches this process's listeners (the display) through the relay.
    with ProgressRelay(count_stopped_elsewhere) as relay:
        return _execute_elsewhere(job_name, suite, storage_root, relay, instance, run_config, tags)


def _execute_elsewhere(
    job_name: str,
    suite: LoadedSuite,
    storage_root: str,
    relay: ProgressRelay,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any],
    tags: dict[str, str],
) -> dg.JobExecutionResult:
    """Run one job on the executor's workers, rebuilt there from a reconstructable pointer."""
    job = dg.build_reconstructable_job(
        __name__,
        reconstruct_run_job.__name__,
        reconstructable_kwargs={
            "suite_path": str(suite.path.resolve()),
            "storage_root": storage_root,
            "job_name": job_name,
            "workers": suite.suite.execution.workers,
            "targets_file": str(suite.targets_given) if suite.targets_given else None,
            "settings": run_settings(Settings.current()),
            "progress_to": relay.address,
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
    suite_keys: list[str] | None = None,
    options: RunOptions | None = None,
    echo: Callable[[str], None] = print,
    display: ProgressDisplay | None = None,
    trigger: str = "cli",
) -> SuiteRun:
    """Materialize every layer for `case_keys` x `agents`, then the report, on the executor
    EVALS_PIPELINE_EXECUTOR names (in-process by default); the layers' progress goes to
    `display` (default: plain lines on stderr; from a celery worker on another host, its
    stderr), and every run is tagged with `trigger` (the report's `trigger`, see
    defs/history.py).

    The suite's partitions are made `suite_keys`, every case key of the suite (default:
    `case_keys`, all of them): a run of some tests (`--test-id`) leaves the others' partitions,
    results and failures in place, runs its cases as one run per range of neighbours, and
    reports on its cases alone."""
    display = display or PlainProgress()
    with listening(display.event):
        registered = list(dict.fromkeys([*(suite_keys or []), *case_keys]))
        order = register_cases(instance, suite.slug, registered)
        picked = set(case_keys)
        assets = SuiteAssets.of(suite)
        runs = _SuiteRuns(
            instance,
            suite,
            storage_root,
            run_definitions(suite, storage_root, display, assets),
            trigger,
        )
        start_up_over()  # imports and definitions are done: the cases' work begins
        executor = runs.defs.resolve_job_def("layers").executor_def
        if executor is not in_process_executor():  # their progress is relayed (progress_relay.py)
            echo(
                f"{suite.slug}: steps run on the {executor.name} workers "
                "(one on another host logs its progress there)"
            )
        run_ids = runs.layers(assets, order, picked, agents, options or RunOptions(), echo)
        if assets.pairwise and len(agents) > 1:
            echo(f"{suite.slug}: comparing {', '.join(agents)} pairwise on {len(picked)} cases")
            run_ids += runs.pairwise(order, picked, agents)
        reported = None if picked >= set(order) else picked
        return runs.report(assets, agents, options or RunOptions(), run_ids, reported)


# Only our logger: the layers' progress lines, not Dagster's event stream.
RUN_CONFIG: dict[str, Any] = {"loggers": {"progress": {}}}


@dataclass(frozen=True)
class _SuiteRuns:
    """The Dagster runs of one suite's `run_suite`: its layers, pairwise and report jobs."""

    instance: dg.DagsterInstance
    suite: LoadedSuite
    storage_root: str
    defs: dg.Definitions
    trigger: str

    def execute(
        self, job: str, tags: dict[str, str], run_config: dict[str, Any] = RUN_CONFIG
    ) -> dg.ExecuteInProcessResult | dg.JobExecutionResult:
        return _execute(
            self.defs,
            self.suite,
            self.storage_root,
            job,
            instance=self.instance,
            # The run carries the command's settings to its steps (a worker's may differ).
            run_config={**run_config, **settings_run_config(Settings.current())},
            tags={**tags, TRIGGER_TAG: self.trigger, **runner_tags()},
        )

    def layers(
        self,
        assets: SuiteAssets,
        order: list[str],
        picked: set[str],
        agents: list[str],
        options: RunOptions,
        echo: Callable[[str], None],
    ) -> list[str]:
        """One run of the layers per group of neighbouring agents and range of neighbouring
        `picked` cases in partition `order` (a Dagster run holds one range); the runs' ids."""
        slug = self.suite.slug
        cases_op = next(a.op.name for a in assets.layers if _holds(a, "cases"))
        sessions = dg.AssetKey([slug, "sessions"])
        budget = options.budget_usd
        run_ids: list[str] = []
        for group in contiguous_ranges(set(agents), list(self.suite.targets)):
            for cases in contiguous_ranges(picked, order):
                echo(f"{slug}: {len(cases)} cases x {', '.join(group)}")
                # Each run after the first gets what the earlier ones left of the run budget.
                config = options.model_copy(update={"budget_usd": budget}).model_dump()
                first, last = partition_key(cases[0], group[0]), partition_key(cases[-1], group[-1])
                result = self.execute(
                    "layers",
                    {
                        "dagster/asset_partition_range_start": str(first),
                        "dagster/asset_partition_range_end": str(last),
                        **eval_run_tags([slug], group),
                    },
                    {**RUN_CONFIG, "ops": {cases_op: {"config": config}}},
                )
                run_ids.append(result.run_id)
                if budget is not None:
                    budget = max(0.0, budget - _agent_cost(result, sessions))
        return run_ids

    def pairwise(self, order: list[str], picked: set[str], agents: list[str]) -> list[str]:
        """One pairwise run per range of neighbouring `picked` cases; the runs' ids."""
        return [
            self.execute(
                "pairwise",
                {
                    "dagster/asset_partition_range_start": cases[0],
                    "dagster/asset_partition_range_end": cases[-1],
                    **eval_run_tags([self.suite.slug], agents),
                },
            ).run_id
            for cases in contiguous_ranges(picked, order)
        ]

    def report(
        self,
        assets: SuiteAssets,
        agents: list[str],
        options: RunOptions,
        run_ids: list[str],
        picked: set[str] | None,
    ) -> SuiteRun:
        """The report job's run (of the `picked` cases alone, when given), and its report."""
        result = self.execute(
            "report",
            {
                **eval_run_tags([self.suite.slug], []),
                # `--target`: the report lists the agents this command ran, not others stored.
                **({REPORT_AGENTS_TAG: ",".join(agents)} if options.targets else {}),
                # `--test-id`: the report lists the cases this command ran, not the others.
                **({REPORT_CASES_TAG: ",".join(sorted(picked))} if picked is not None else {}),
            },
        )
        run_ids.append(result.run_id)
        materialization = result.asset_materializations_for_node(assets.report.op.name)[0]
        # The report folder here: on an object-store root, fetched into this process's mirror.
        root = open_root(self.storage_root)
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


def _holds(asset: dg.AssetsDefinition, layer: str) -> bool:
    return any(key.path[-1] == layer for key in asset.keys)


def _agent_cost(
    result: dg.ExecuteInProcessResult | dg.JobExecutionResult, sessions: dg.AssetKey
) -> float:
    """What a run's agents cost: the sum of its sessions' per-partition `cost_usd`."""
    total = 0.0
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key != sessions:
            continue
        cost = materialization.metadata.get("cost_usd")
        if cost is not None and isinstance(cost.value, int | float):
            total += float(cost.value)
    return total
