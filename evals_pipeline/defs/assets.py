"""The five layers of one suite as assets: cases -> agent_runs -> sessions -> grades ->
eval_report. Asset bodies only wire; the work is in evals_pipeline.layers and the domain."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import dagster as dg

from evals_pipeline.defs.case_checks import case_check_evaluations, case_passes_spec
from evals_pipeline.defs.executor import executor_name
from evals_pipeline.defs.history import (
    regression_check_result,
    regression_check_spec,
    report_trigger,
)
from evals_pipeline.defs.io_manager import (
    IO_MANAGER_KEY,
    Records,
    clean_records,
    keyed,
    records_in,
    stored_digests,
)
from evals_pipeline.defs.judging import (
    build_judgments,
    build_pairwise_verdicts,
    grader_pool,
)
from evals_pipeline.defs.partition_metadata import (
    add_partition_metadata,
    grade_metadata,
    run_metadata,
    session_metadata,
)
from evals_pipeline.defs.partitions import (
    SINGLE_RUN,
    case_partitions_name,
    split_key,
    suite_partitions,
)
from evals_pipeline.defs.pools import agent_pool
from evals_pipeline.defs.report_metadata import report_metadata
from evals_pipeline.defs.report_scope import ReportScope
from evals_pipeline.defs.resources import EvalStorage
from evals_pipeline.enrichers import ahead
from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.grading import ahead as grading_ahead
from evals_pipeline.history import (
    HISTORY_FILES,
    REPORT_ASSET,
    ReportHistory,
    outcomes_from_grades,
)
from evals_pipeline.instance.run_tags import report_agents
from evals_pipeline.layers import (
    agent_runs_ahead,
    enrich_runs,
    grade_cases,
    run_agents,
)
from evals_pipeline.layers.feed import feed_later_steps
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.progress import logging_progress
from evals_pipeline.reporting import build_report, load_labels
from evals_pipeline.reporting.not_run import LAUNCHED, not_run_cases
from evals_pipeline.results.fingerprint import suite_fingerprint
from evals_pipeline.suites import (
    LoadedSuite,
    RunOptions,
    SuiteError,
    run_cases,
)
from evals_pipeline.suites.resolution import Resolution, resolve_recorded

LAYERS = ("cases", "agent_runs", "sessions", "grades", "judgments")


class CaseOptions(dg.Config):
    """Launch-time options of the cases asset (RunOptions as Dagster config, so a UI launch or
    `dagster asset materialize --config` can set them as `evals-pipeline run` does)."""

    threshold: float | None = None
    keep_workspaces: bool = False
    cache: bool = True
    agentv_scoring: bool = False
    targets: list[str] | None = None
    budget_usd: float | None = None


def build_suite_assets(
    loaded: LoadedSuite, resolution: Resolution | None = None
) -> list[dg.AssetsDefinition]:
    """The asset group of one suite, partitioned by its own cases x its own agents
    (`resolution`: its resolved cases, when the caller has them already)."""
    with warnings.catch_warnings():
        # Backfill policies are beta in Dagster 1.13; the batching they give is the point here.
        warnings.simplefilter("ignore", dg.BetaWarning)
        # Partitioned asset checks are a preview: they make each failed case a red check.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return _suite_assets(loaded, resolution or resolve_recorded(loaded))


def _in_this_run(context: dg.AssetExecutionContext, key: list[str]) -> bool:
    """Whether the run materializes the asset at `key` too (a step of its own in its plan)."""
    selected = context.run.asset_selection or context.job_def.asset_layer.executable_asset_keys
    return dg.AssetKey(key) in selected  # an empty selection: the whole job


def _suite_assets(loaded: LoadedSuite, resolution: Resolution) -> list[dg.AssetsDefinition]:
    suite, path = loaded.slug, loaded.path
    agents = list(loaded.targets)
    workers = loaded.suite.execution.workers
    partitions = suite_partitions(suite, agents, path)
    # Resolved once for the fingerprint, the graders' pool and the report's scope.
    resolved_now = resolution.cases
    layer: dict[str, Any] = {
        "key_prefix": [suite],
        "partitions_def": partitions,
        "io_manager_key": IO_MANAGER_KEY,
        "backfill_policy": SINGLE_RUN,
        # The suite file, the files it names and its graders: a change marks partitions stale.
        "code_version": suite_fingerprint(loaded, resolution),
    }

    def upstream(name: str) -> dg.AssetIn:
        return records_in([suite, name])

    @dg.asset(name="cases", kinds={"yaml"}, **layer)
    def cases(context: dg.AssetExecutionContext, config: CaseOptions) -> Records:
        """The frozen spec of each test as each agent receives it, re-read from the suite file
        (with the run's options, e.g. `--threshold`, laid over it)."""
        options = RunOptions(**config.model_dump())
        try:
            resolved = {
                (c.case_key, c.agent): c for c in run_cases(path, options, loaded.targets_given)
            }
        except SuiteError as exc:
            raise dg.Failure(f"{path} no longer loads:\n{exc}") from exc
        tests = {case_key for case_key, _ in resolved}
        out: Records = []
        for key in context.partition_keys:
            case_key, agent = split_key(key)
            if (case_key, agent) not in resolved:
                if case_key in tests:  # the test names its own targets: not this pair
                    continue
                raise dg.Failure(
                    f"case {case_key!r} for agent {agent!r} is not in {path} any more; the "
                    f"{suite}_cases sensor (or `evals-pipeline register`) removes stale partitions."
                )
            out.append((str(key), resolved[(case_key, agent)]))
        return out

    @dg.asset(name="agent_runs", ins={"cases": upstream("cases")}, pool=agent_pool(loaded), **layer)
    def agent_runs(
        context: dg.AssetExecutionContext, storage: EvalStorage, cases: list[ResolvedCase]
    ) -> Records:
        """Each agent run in a fresh workspace: stdout, stderr, exit code, timing, timeouts."""
        folder = storage.step_folder(context.asset_key, context.run.run_id)
        run_id = context.run.run_id
        store = storage.results(suite, run_id)
        # `evals-pipeline run` starts its first run's agents before Dagster loads: taken here
        # when they ran these cases.
        started = agent_runs_ahead.claim(folder)
        try:
            runs = started.take(cases) if started is not None else None
        finally:
            if started is not None:
                started.close()
        if runs is None:
            finished = None
            # The sessions step of this run, in this process next: each session made meanwhile,
            # and when the grades step comes after it too, each case graded once its sessions are.
            if _in_this_run(context, [suite, "sessions"]) and executor_name() == "in_process":
                finished = feed_later_steps(
                    cases,
                    lambda layer: storage.step_folder(dg.AssetKey([suite, layer]), run_id),
                    workers=workers,
                    store=store,
                    grades=_in_this_run(context, [suite, "grades"]),
                )
            runs = run_agents(
                cases,
                folder,
                workers=workers,
                progress=logging_progress(context.log),
                run_id=run_id,
                git_cache=storage.storage.local / "git-cache",
                store=store,
                finished=finished,
            )
        add_partition_metadata(context, runs, run_metadata)
        return keyed(runs)

    @dg.asset(name="sessions", ins={"agent_runs": upstream("agent_runs")}, **layer)
    def sessions(
        context: dg.AssetExecutionContext, storage: EvalStorage, agent_runs: list[AgentRun]
    ) -> Records:
        """Each run as a canonical session; messages stored once as Parquet."""
        folder = storage.step_folder(context.asset_key, context.run.run_id)
        made = ahead.claim(folder)
        try:
            enriched = enrich_runs(
                agent_runs, folder, storage.results(suite, context.run.run_id), made
            )
        finally:
            if made is not None:
                made.close()
        add_partition_metadata(context, enriched, session_metadata)
        return keyed(enriched)

    @dg.asset(
        name="grades",
        ins={"cases": upstream("cases"), "sessions": upstream("sessions")},
        pool=grader_pool(loaded, resolved_now),
        check_specs=[case_passes_spec(dg.AssetKey([suite, "grades"]), partitions)],
        **layer,
    )
    def grades(
        context: dg.AssetExecutionContext,
        storage: EvalStorage,
        cases: list[ResolvedCase],
        sessions: list[Session],
    ) -> Iterator[dg.Output[Any] | dg.AssetCheckEvaluation]:
        """Every grader's verdict on each session, and the case verdict they add up to; each
        partition shows its verdict, score, cost, tokens and duration, and `case_passes` fails
        for the cases that did not pass."""
        made = grading_ahead.claim(storage.step_folder(context.asset_key, context.run.run_id))
        try:
            graded = grade_cases(
                cases,
                sessions,
                workers=workers,
                progress=logging_progress(context.log),
                store=storage.results(suite, context.run.run_id),
                ahead=made,
            )
        finally:
            if made is not None:
                made.close()
        add_partition_metadata(context, graded, lambda group: grade_metadata(group[0]))
        yield dg.Output(keyed(graded))
        yield from case_check_evaluations(context, graded)

    judgments = build_judgments(loaded, layer)

    scope = ReportScope.of(resolved_now)  # not resolved again in the report's body
    report_ins: dict[str, dg.AssetIn] = {
        name: records_in(
            [suite, name],
            partition_mapping=dg.AllPartitionMapping(),
            allow_missing=True,
            # Only the runs that were not launched: the report lists them (not_run_cases).
            skip_holding=LAUNCHED if name == "agent_runs" else (),
        )
        for name in ("grades", "judgments", "sessions", "cases", "agent_runs")
    }
    extra: list[dg.AssetsDefinition] = []
    judging = loaded.suite.judging
    if judging is not None and judging.pairwise and len(agents) > 1:
        extra.append(build_pairwise_verdicts(loaded))
        report_ins["pairwise_verdicts"] = records_in(
            [suite, "pairwise_verdicts"],
            partition_mapping=dg.AllPartitionMapping(),
            allow_missing=True,
        )

    @dg.asset(
        name="eval_report",
        key_prefix=[suite],
        kinds={"parquet"},
        ins=report_ins,
        check_specs=[regression_check_spec(suite)],
        code_version=layer["code_version"],
    )
    def eval_report(
        context: dg.AssetExecutionContext,
        storage: EvalStorage,
        grades: list[CaseGrade],
        judgments: list[CaseJudgment],
        sessions: list[Session],
        cases: list[ResolvedCase],
        agent_runs: list[AgentRun],
        **more: list[CasePairwise],
    ) -> dg.MaterializeResult:
        """Pass rates per agent, judged dimensions with corrected rates, failure attribution and
        comparisons, over the latest records of every partition."""
        with gc_paused(kept=True):  # 10,000 cases' records and their report: no collector passes
            registered = set(context.instance.get_dynamic_partitions(case_partitions_name(suite)))
            pairwise = more.get("pairwise_verdicts", [])
            shown = report_agents(context.run.tags, agents)
            if shown != agents:  # `run --target`: its agents only, not others' stored results
                grades = [g for g in grades if g.agent in shown]
                judgments = [j for j in judgments if j.agent in shown]
                sessions = [s for s in sessions if s.agent in shown]
                cases = [c for c in cases if c.agent in shown]
                agent_runs = [r for r in agent_runs if r.agent in shown]
                pairwise = [_pairs_among(p, shown) for p in pairwise]
            # Pairs of the matrix a test leaves out (it names its own targets) are not "not run".
            expected = scope.expected(cases, registered, shown)
            labels_file = _labels_file(loaded)
            labels = load_labels(labels_file) if labels_file else None
            report = build_report(
                suite,
                grades,
                agents=shown,
                not_run=max(0, expected - len(grades)),
                run_id=context.run.run_id,
                judgments=judgments,
                pairwise=pairwise,
                labels=labels,
                labels_source=labels_file,
            ).model_copy(update={"not_run_cases": not_run_cases(agent_runs, cases, grades)})
            folder = storage.step_folder(context.asset_key, context.run.run_id)
            root = storage.storage
            root.pull(f"{suite}/{REPORT_ASSET}", HISTORY_FILES)  # earlier reports, for the history
            base = report.model_copy(update={"trigger": report_trigger(context, suite)})
            history = ReportHistory.find(base, folder, root.local)
            from evals_pipeline.reporting import write_report  # loaded when it is needed

            # The comparison's bootstraps (numpy, without the GIL) are drawn on a thread while
            # the tables and case pages, which show no history, are written.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="history") as pool:
                compared = pool.submit(
                    history.attach,
                    base,
                    outcomes_from_grades(grades),
                    agents=shown if shown != agents else None,
                )
                files = write_report(
                    base,
                    grades,
                    folder,
                    judgments=judgments,
                    pairwise=pairwise,
                    sessions=sessions,
                    cases=cases,
                    previous=history.previous_folder,
                    stored=stored_digests(grades, judgments, sessions, cases),
                    clean=clean_records(grades, judgments, pairwise, sessions, cases),
                    history=compared,
                )
            report = compared.result()
            root.publish(folder)
            required = scope.required_tests(cases)
            return dg.MaterializeResult(
                metadata={**report_metadata(report, files), "dagster/uri": root.uri(folder)},
                check_results=[regression_check_result(report, required)],
            )

    return [cases, agent_runs, sessions, grades, judgments, *extra, eval_report]


def _pairs_among(record: CasePairwise, agents: list[str]) -> CasePairwise:
    """The record with only the pairs of two of `agents`."""
    pairs = tuple(p for p in record.pairs if p.agent_a in agents and p.agent_b in agents)
    return record.model_copy(update={"pairs": pairs})


def _labels_file(loaded: LoadedSuite) -> str | None:
    """The suite's file of human labels for calibration, if `judging.calibration` names one."""
    judging = loaded.suite.judging
    if judging is None or judging.calibration is None:
        return None
    return str(loaded.base_dir / judging.calibration)
