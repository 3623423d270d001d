"""The judge layer's assets, `judgments` and `pairwise_verdicts`. The panel's calls to each LLM
provider run in an op of their own, in the Dagster pool `evals_llm_<provider>`, so a limit set on
that pool holds across runs for that provider alone; a last op turns the votes into records."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
import itertools
from collections.abc import Mapping
from typing import Any

import dagster as dg

from evals_pipeline.defs.io_manager import IO_MANAGER_KEY, Records, keyed, records_in
from evals_pipeline.defs.partitions import CASE, SINGLE_RUN, case_partitions_name
from evals_pipeline.defs.resources import EvalStorage
from evals_pipeline.judging import PairReadings, TrialVotes
from evals_pipeline.layers import (
    collect_readings,
    collect_votes,
    compare_cases,
    judge_cases,
    panel_judges,
)
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.session import Session
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.progress import logging_progress
from evals_pipeline.suites import LoadedSuite, SuiteError, load_suite


def llm_pool(provider: str) -> str:
    """The Dagster pool of the steps that call `provider`'s API."""
    return f"evals_llm_{provider}"


def reload_suite(loaded: LoadedSuite) -> LoadedSuite:
    """The suite as it is now on disk (judges and their settings may change between runs),
    with the targets file it was loaded with, when one was given (`run --targets`)."""
    try:
        return load_suite(loaded.path, loaded.targets_given)
    except SuiteError as exc:
        raise dg.Failure(f"{loaded.path} no longer loads:\n{exc}") from exc


def panel_providers(loaded: LoadedSuite) -> list[str]:
    """The providers of the suite's panel judges, each of which gets a pool."""
    judging = loaded.suite.judging
    if judging is None:
        return []
    return sorted({t.provider for t in panel_judges(judging, loaded.judges).values()})


def build_judgments(loaded: LoadedSuite, layer: Mapping[str, Any]) -> dg.AssetsDefinition:
    """`judgments`: without a panel one plain step; with one, a vote op per provider in that
    provider's pool, then the op that blends the votes with heuristics and attributes failures."""
    suite = loaded.slug
    workers = loaded.suite.execution.workers
    providers = panel_providers(loaded)
    ins = {name: records_in([suite, name]) for name in ("cases", "sessions", "grades")}
    description = (
        "Five dimensions per trial (grounded panel votes blended with heuristics) and why each "
        "failed trial failed."
    )

    def judge(
        context: dg.OpExecutionContext,
        cases: list[ResolvedCase],
        sessions: list[Session],
        grades: list[CaseGrade],
        votes: list[TrialVotes],
    ) -> Records:
        current = reload_suite(loaded)
        _check_providers(current, providers)
        judged = judge_cases(
            cases,
            sessions,
            grades,
            current.suite.judging,
            votes,
            workers=workers,
            progress=logging_progress(context.log),
        )
        return keyed(judged)

    if not providers:

        @dg.asset(name="judgments", ins=ins, description=description, **layer)
        def heuristic_judgments(
            context: dg.AssetExecutionContext,
            cases: list[ResolvedCase],
            sessions: list[Session],
            grades: list[CaseGrade],
        ) -> Records:
            return judge(context.op_execution_context, cases, sessions, grades, [])

        return heuristic_judgments

    vote_ops = [_votes_op(loaded, provider) for provider in providers]

    @dg.op(name=f"{suite}__judge_trials", out=dg.Out(io_manager_key=IO_MANAGER_KEY))
    def judge_trials(
        context: dg.OpExecutionContext,
        cases: list[ResolvedCase],
        sessions: list[Session],
        grades: list[CaseGrade],
        votes: list[list[TrialVotes]],
    ) -> Records:
        """The panel's votes blended with heuristics per dimension, and failures attributed."""
        return judge(context, cases, sessions, grades, list(itertools.chain(*votes)))

    @dg.graph_asset(name="judgments", ins=ins, description=description, **_graph(layer))
    def judgments(cases: Any, sessions: Any, grades: Any) -> Any:
        votes = [op(cases, sessions, grades) for op in vote_ops]
        return judge_trials(cases, sessions, grades, votes)

    return judgments


def _votes_op(loaded: LoadedSuite, provider: str) -> dg.OpDefinition:
    suite = loaded.slug
    workers = loaded.suite.execution.workers

    @dg.op(name=f"{suite}__{provider}_votes", pool=llm_pool(provider))
    def votes(
        context: dg.OpExecutionContext,
        storage: EvalStorage,
        cases: list[ResolvedCase],
        sessions: list[Session],
        grades: list[CaseGrade],
    ) -> list[TrialVotes]:
        """The panel's judges of one provider on every dimension of every trial."""
        judging, judges = _panel_of(reload_suite(loaded), provider)
        if judging is None:
            return []
        return collect_votes(
            cases,
            sessions,
            grades,
            judging,
            judges,
            workers=workers,
            folder=storage.step_folder(dg.AssetKey([suite, "judgments"]), context.run.run_id),
            progress=logging_progress(context.log),
            store=storage.results(suite, context.run.run_id),
        )

    return votes


def build_pairwise_verdicts(loaded: LoadedSuite) -> dg.AssetsDefinition:
    """`pairwise_verdicts`, per case: every pair of its agents read by each provider's judges in
    that provider's pool, then the verdicts."""
    suite, path = loaded.slug, loaded.path
    by_case = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=CASE)
    ins = {
        name: records_in([suite, name], partition_mapping=by_case) for name in ("cases", "sessions")
    }
    providers = panel_providers(loaded)
    reading_ops = [_readings_op(loaded, provider) for provider in providers]

    @dg.op(name=f"{suite}__compare_agents", out=dg.Out(io_manager_key=IO_MANAGER_KEY))
    def compare_agents(
        context: dg.OpExecutionContext,
        cases: list[ResolvedCase],
        readings: list[list[PairReadings]],
    ) -> Records:
        """Each pair's verdict overall and per dimension, a win only when both orders agree."""
        current = reload_suite(loaded)
        _check_providers(current, providers)
        judging = current.suite.judging
        if judging is None:
            raise dg.Failure(f"{path} has no judging: section any more; nothing compares agents")
        compared = compare_cases(
            cases, judging, itertools.chain(*readings), progress=logging_progress(context.log)
        )
        return [(c.case_key, c) for c in compared]

    layer: dict[str, Any] = {
        "key_prefix": [suite],
        "partitions_def": dg.DynamicPartitionsDefinition(name=case_partitions_name(suite)),
        "backfill_policy": SINGLE_RUN,
    }

    @dg.graph_asset(name="pairwise_verdicts", ins=ins, **layer)
    def pairwise_verdicts(cases: Any, sessions: Any) -> Any:
        """The agents of each case compared pairwise by the panel, A/B then B/A."""
        readings = [op(cases, sessions) for op in reading_ops]
        return compare_agents(cases, readings)

    return pairwise_verdicts


def _readings_op(loaded: LoadedSuite, provider: str) -> dg.OpDefinition:
    suite = loaded.slug

    @dg.op(name=f"{suite}__{provider}_readings", pool=llm_pool(provider))
    def readings(
        context: dg.OpExecutionContext,
        storage: EvalStorage,
        cases: list[ResolvedCase],
        sessions: list[Session],
    ) -> list[PairReadings]:
        """The panel's judges of one provider on every pair of agents, in both orders."""
        judging, judges = _panel_of(reload_suite(loaded), provider)
        if judging is None:
            return []
        folder = dg.AssetKey([suite, "pairwise_verdicts"])
        return collect_readings(
            cases,
            sessions,
            judging,
            judges,
            folder=storage.step_folder(folder, context.run.run_id),
            progress=logging_progress(context.log),
        )

    return readings


def _graph(layer: Mapping[str, Any]) -> dict[str, Any]:
    """An asset's options as a graph-backed asset takes them (its last op names the IO manager)."""
    return {k: v for k, v in layer.items() if k != "io_manager_key"}


def _panel_of(
    loaded: LoadedSuite, provider: str
) -> tuple[JudgingSpec | None, dict[str, LlmTargetSpec]]:
    judging = loaded.suite.judging
    if judging is None:
        return None, {}
    return judging, panel_judges(judging, loaded.judges, provider)


def _check_providers(current: LoadedSuite, providers: list[str]) -> None:
    """Fail when the panel on disk calls a provider this code location has no op for."""
    unserved = sorted(set(panel_providers(current)) - set(providers))
    if unserved:
        raise dg.Failure(
            f"{current.path}: the panel now has {', '.join(unserved)} judges, but this code "
            "location was loaded before they were added, so their calls have no op and no pool. "
            "Reload the code location (Deployment > Reload in the UI), then materialize again."
        )
