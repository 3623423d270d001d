"""The layers of one suite as assets: cases -> agent_runs -> sessions -> grades (one step per
batch of cases: defs/case_pipeline.py) -> judgments -> eval_report. Asset bodies only wire; the
work is in evals_pipeline.layers and the domain."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
import warnings
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import dagster as dg

from evals_pipeline.defs.case_pipeline import build_case_pipeline
from evals_pipeline.defs.history import (
    regression_check_result,
    regression_check_spec,
    report_trigger,
)
from evals_pipeline.defs.io_manager import (
    IO_MANAGER_KEY,
    clean_records,
    records_in,
    stored_digests,
)
from evals_pipeline.defs.judging import build_judgments, build_pairwise_verdicts
from evals_pipeline.defs.partitions import (
    SINGLE_RUN,
    case_partitions_name,
    suite_partitions,
)
from evals_pipeline.defs.report_metadata import report_metadata
from evals_pipeline.defs.report_scope import ReportScope
from evals_pipeline.defs.resources import EvalStorage
from evals_pipeline.defs.settings_resource import EvalsSettings
from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.history import (
    HISTORY_FILES,
    REPORT_ASSET,
    ReportHistory,
    outcomes_from_grades,
)
from evals_pipeline.instance.run_tags import report_agents, report_cases
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.reporting import build_report, load_labels
from evals_pipeline.reporting.not_run import LAUNCHED, not_run_cases
from evals_pipeline.results.fingerprint import suite_fingerprint
from evals_pipeline.suites import (
    LoadedSuite,
)
from evals_pipeline.suites.resolution import Resolution, resolve_recorded

if TYPE_CHECKING:
    from evals_pipeline.reporting import ReportFiles

LAYERS = ("cases", "agent_runs", "sessions", "grades", "judgments")


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


def _suite_assets(loaded: LoadedSuite, resolution: Resolution) -> list[dg.AssetsDefinition]:
    suite = loaded.slug
    agents = list(loaded.targets)
    layer: dict[str, Any] = {
        "key_prefix": [suite],
        "partitions_def": suite_partitions(suite, agents, loaded.path),
        "io_manager_key": IO_MANAGER_KEY,
        "backfill_policy": SINGLE_RUN,
        # The suite file, the files it names and its graders: a change marks partitions stale.
        "code_version": suite_fingerprint(loaded, resolution),
    }
    ins = _report_ins(suite)
    extra: list[dg.AssetsDefinition] = []
    judging = loaded.suite.judging
    if judging is not None and judging.pairwise and len(agents) > 1:
        extra.append(build_pairwise_verdicts(loaded))
        ins["pairwise_verdicts"] = records_in(
            [suite, "pairwise_verdicts"],
            partition_mapping=dg.AllPartitionMapping(),
            allow_missing=True,
        )
    # Resolved once for the fingerprint and the report's scope, not again in the report's body.
    scope = ReportScope.of(resolution.cases)
    return [
        build_case_pipeline(loaded, layer),
        build_judgments(loaded, layer),
        *extra,
        _report_asset(loaded, layer["code_version"], scope, ins),
    ]


def _report_ins(suite: str) -> dict[str, dg.AssetIn]:
    """The report's inputs: the latest records of every partition of each layer."""
    return {
        name: records_in(
            [suite, name],
            partition_mapping=dg.AllPartitionMapping(),
            allow_missing=True,
            # Only the runs that were not launched: the report lists them (not_run_cases).
            skip_holding=LAUNCHED if name == "agent_runs" else (),
        )
        for name in ("grades", "judgments", "sessions", "cases", "agent_runs")
    }


class ReportInputs(NamedTuple):
    """The records the report is made of (those of the agents it shows)."""

    grades: list[CaseGrade]
    judgments: list[CaseJudgment]
    sessions: list[Session]
    cases: list[ResolvedCase]
    agent_runs: list[AgentRun]
    pairwise: list[CasePairwise]

    def among(self, shown: list[str]) -> "ReportInputs":
        """The records of the agents `shown` only (`run --target`), not others' stored ones."""
        return ReportInputs(
            [g for g in self.grades if g.agent in shown],
            [j for j in self.judgments if j.agent in shown],
            [s for s in self.sessions if s.agent in shown],
            [c for c in self.cases if c.agent in shown],
            [r for r in self.agent_runs if r.agent in shown],
            [_pairs_among(p, shown) for p in self.pairwise],
        )

    def of_cases(self, picked: Collection[str]) -> "ReportInputs":
        """The records of the cases `picked` only (`run --test-id`)."""
        return ReportInputs(
            [g for g in self.grades if g.case_key in picked],
            [j for j in self.judgments if j.case_key in picked],
            [s for s in self.sessions if s.case_key in picked],
            [c for c in self.cases if c.case_key in picked],
            [r for r in self.agent_runs if r.case_key in picked],
            [p for p in self.pairwise if p.case_key in picked],
        )


def _report_asset(
    loaded: LoadedSuite, code_version: str, scope: ReportScope, ins: dict[str, dg.AssetIn]
) -> dg.AssetsDefinition:
    suite = loaded.slug

    @dg.asset(
        name="eval_report",
        key_prefix=[suite],
        kinds={"parquet"},
        ins=ins,
        check_specs=[regression_check_spec(suite)],
        code_version=code_version,
    )
    def eval_report(
        context: dg.AssetExecutionContext,
        storage: EvalStorage,
        settings: EvalsSettings,
        grades: list[CaseGrade],
        judgments: list[CaseJudgment],
        sessions: list[Session],
        cases: list[ResolvedCase],
        agent_runs: list[AgentRun],
        **more: list[CasePairwise],
    ) -> dg.MaterializeResult:
        """Pass rates per agent, judged dimensions with corrected rates, failure attribution and
        comparisons, over the latest records of every partition."""
        pairwise = more.get("pairwise_verdicts", [])
        inputs = ReportInputs(grades, judgments, sessions, cases, agent_runs, pairwise)
        # The report's helpers (the storage cache, the parse cache) take the resource's settings.
        with gc_paused(kept=True), settings.settings().use():  # 10,000 cases' records: no GC
            return _make_report(context, storage, loaded, scope, inputs)

    return eval_report


def _make_report(
    context: dg.AssetExecutionContext,
    storage: EvalStorage,
    loaded: LoadedSuite,
    scope: ReportScope,
    given: ReportInputs,
) -> dg.MaterializeResult:
    suite, agents = loaded.slug, list(loaded.targets)
    registered = set(context.instance.get_dynamic_partitions(case_partitions_name(suite)))
    shown = report_agents(context.run.tags, agents)
    inputs = given.among(shown) if shown != agents else given
    picked = report_cases(context.run.tags)
    if picked is not None:
        inputs, registered = inputs.of_cases(picked), registered & picked
    # Pairs of the matrix a test leaves out (it names its own targets) are not "not run".
    expected = scope.expected(inputs.cases, registered, shown)
    labels_file = _labels_file(loaded)
    labels = load_labels(labels_file) if labels_file else None
    report = build_report(
        suite,
        inputs.grades,
        agents=shown,
        not_run=max(0, expected - len(inputs.grades)),
        run_id=context.run.run_id,
        judgments=inputs.judgments,
        pairwise=inputs.pairwise,
        labels=labels,
        labels_source=labels_file,
    ).model_copy(
        update={"not_run_cases": not_run_cases(inputs.agent_runs, inputs.cases, inputs.grades)}
    )
    folder = storage.step_folder(context.asset_key, context.run.run_id)
    root = storage.storage
    root.pull(f"{suite}/{REPORT_ASSET}", HISTORY_FILES)  # earlier reports, for the history
    base = report.model_copy(update={"trigger": report_trigger(context, suite)})
    history = ReportHistory.find(base, folder, root.local)
    report, files = _write(base, history, inputs, folder, shown if shown != agents else None)
    root.publish(folder)
    # Where the report went, in the run's logs: `dagster asset materialize` and a UI run print
    # it as `evals-pipeline run` does.
    published = f" (published to {root.uri(folder)})" if root.remote else ""
    context.log.info(f"report: {files.folder}{published}\nhtml: {files.report_html}")
    return dg.MaterializeResult(
        metadata={**report_metadata(report, files), "dagster/uri": root.uri(folder)},
        check_results=[regression_check_result(report, scope.required_tests(inputs.cases))],
    )


def _write(
    base: EvalReport,
    history: ReportHistory,
    inputs: ReportInputs,
    folder: Path,
    agents: list[str] | None,
) -> "tuple[EvalReport, ReportFiles]":
    """The report with its history attached, and the files written into `folder`."""
    from evals_pipeline.reporting import write_report  # loaded when it is needed

    grades, judgments, sessions, cases = inputs[:4]
    # The comparison's bootstraps (numpy, without the GIL) are drawn on a thread while
    # the tables and case pages, which show no history, are written.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="history") as pool:
        compared = pool.submit(history.attach, base, outcomes_from_grades(grades), agents=agents)
        files = write_report(
            base,
            grades,
            folder,
            judgments=judgments,
            pairwise=inputs.pairwise,
            sessions=sessions,
            cases=cases,
            previous=history.previous_folder,
            stored=stored_digests(grades, judgments, sessions, cases),
            clean=clean_records(grades, judgments, inputs.pairwise, sessions, cases),
            history=compared,
        )
    return compared.result(), files


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
