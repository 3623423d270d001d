"""Settings a single run lays over a suite file, as `agentv eval` flags do (`--threshold`,
`--keep-workspaces`, `--target`), so the file itself stays the one spec of the suite."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.suite import TestExecutionSpec
from evals_pipeline.suites.loader import LoadedSuite, load_suite
from evals_pipeline.suites.resolve import resolve_cases


class RunOptions(BaseModel):
    """One run's overrides; the defaults change nothing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass score of tests without execution.threshold."
    )
    keep_workspaces: bool = Field(
        default=False, description="Keep every run's workspace, not only failed ones."
    )
    cache: bool = Field(
        default=True, description="Reuse stored results of unchanged cases (false: re-run all)."
    )
    agentv_scoring: bool = Field(
        default=False,
        description="Score a grader that could not judge 0 and average it in, as AgentV does, "
        "instead of making its case an error.",
    )
    targets: list[str] | None = Field(
        default=None,
        description="The run's targets (`--target`, AgentV's cliTargets) instead of the suite's: "
        "with one, every test runs on it; with several, a test's execution.targets chooses.",
    )
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        description="The run's spend cap in USD over all its agents: once the finished runs' "
        "cost reaches it, no new agent run starts and the rest are not run.",
    )


def apply_run_options(loaded: LoadedSuite, options: RunOptions) -> LoadedSuite:
    """`loaded` with `options` written into its tests (changed in place); the budget and
    `--keep-workspaces` go on its resolved cases instead (with_run_options)."""
    spec = loaded.suite
    if options.threshold is not None:
        for test in spec.tests:
            if test.execution is None:
                test.execution = TestExecutionSpec(threshold=options.threshold)
            elif test.execution.threshold is None:
                test.execution.threshold = options.threshold
    if not options.cache:
        spec.execution.cache = False
        for test in spec.tests:
            if test.execution is None:
                test.execution = TestExecutionSpec(cache=False)
            else:
                test.execution.cache = False
    return loaded


def with_run_options(cases: Iterable[ResolvedCase], options: RunOptions) -> list[ResolvedCase]:
    """`cases` carrying the run's budget, `--keep-workspaces` and `--agentv-scoring`, so the steps
    that run and grade them keep to those (none is part of a case's content hash: they are the
    run's, not the case's; `--agentv-scoring` is part of its grade's key)."""
    update: dict[str, object] = {}
    if options.agentv_scoring:
        update["agentv_scoring"] = True
    if options.budget_usd is not None:
        update["run_budget_usd"] = options.budget_usd
    if options.keep_workspaces:
        update["keep_workspaces"] = True
    return [c.model_copy(update=update) for c in cases] if update else list(cases)


def run_cases(
    path: Path, options: RunOptions, targets_file: Path | None = None
) -> list[ResolvedCase]:
    """A run's cases (every agent's) as its case step makes them: the suite read again from
    its file (with the run's `targets_file`, `run --targets`), which stays the one spec, with
    `options` laid over it."""
    loaded = apply_run_options(load_suite(path, targets_file), options)
    return with_run_options(resolve_cases(loaded, targets=options.targets), options)
