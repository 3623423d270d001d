"""`run` (a whole suite through the asset graph) and `estimate` (its cost and time first)."""

from __future__ import annotations

import argparse
import math
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evals_pipeline.cli.exits import (
    EXIT_ALL_ERRORS,
    EXIT_NOT_RUN,
    EXIT_OK,
    EXIT_THRESHOLD,
    EXIT_USAGE,
    usage_error,
)
from evals_pipeline.cli.locations import cli_instance, storage_folder, storage_url
from evals_pipeline.cli.selection import load_suites, select_agents, select_cases, tags_match
from evals_pipeline.terminal_text import for_terminal

if TYPE_CHECKING:
    from dagster import DagsterInstance

    from evals_pipeline.defs.suite_run import SuiteRun
    from evals_pipeline.history.estimate import RunEstimate
    from evals_pipeline.models.case import ResolvedCase
    from evals_pipeline.models.report import EvalReport
    from evals_pipeline.settings import Settings
    from evals_pipeline.suites import LoadedSuite, RunOptions


def cmd_run(args: argparse.Namespace) -> int:
    """Run the suites; Ctrl-C or SIGTERM stops the run and keeps what finished
    (cli/interrupts.py)."""
    from evals_pipeline.cli.interrupts import run_stoppable

    return run_stoppable(lambda: _run_command(args))


def _run_command(args: argparse.Namespace) -> int:
    from evals_pipeline.defs.executor import ExecutorSettingError, executor_name
    from evals_pipeline.provider_limits import use_limits
    from evals_pipeline.storage_env import storage_root, storage_root_from_env
    from evals_pipeline.suites.target_catalog import explicit_targets_file

    settings: Settings = args.settings  # read once (cli/entry.py); what the run needs is passed on
    chosen = None
    if args.targets:
        chosen = explicit_targets_file(args.targets)
        if chosen is None:
            return usage_error(
                f"--targets: no targets file at {Path(args.targets).expanduser().resolve()}; "
                "give a targets YAML file, or a folder holding targets.yaml or "
                ".agentv/targets.yaml"
            )
    # Each suite keeps the chosen file (LoadedSuite.targets_given): every step that reads the
    # suite again, here or in a worker rebuilding the job (defs/suite_run.py), is given it.
    loaded = load_suites(args.suites, strict=getattr(args, "strict", False), targets_file=chosen)
    if isinstance(loaded, int):
        return loaded
    try:
        executor_name(settings)
    except ExecutorSettingError as exc:
        return usage_error(str(exc))
    auth_failed = _check_auth(loaded, args.target)
    if auth_failed:
        return auth_failed
    limits = _provider_limits(settings, args.limit)
    if isinstance(limits, str):
        return usage_error(limits)
    storage = storage_root(args.storage) if args.storage else storage_root_from_env(settings)
    with use_limits(limits):
        return _run_suites(args, loaded, storage)


@dataclass
class _Tally:
    """What the command's suites add up to, for its exit code and CI files."""

    budget_left: float | None
    finished: list[tuple[EvalReport, Path]] = field(default_factory=list)
    cases_total: int = 0
    cases_errored: int = 0
    cases_not_run: int = 0
    below_threshold: bool = False

    def exit_code(self) -> int:
        if self.cases_total and self.cases_errored == self.cases_total:
            print("every case errored: nothing was evaluated", file=sys.stderr)
            return EXIT_ALL_ERRORS
        if self.below_threshold:
            return EXIT_THRESHOLD
        if self.cases_not_run:
            print(f"{self.cases_not_run} cases not run: the run budget (--budget)", file=sys.stderr)
            return EXIT_NOT_RUN
        return EXIT_OK


def _run_suites(args: argparse.Namespace, loaded: list[LoadedSuite], storage: str) -> int:
    """Run each suite in turn and print its report; the command's exit code."""
    from evals_pipeline.suites import (
        RunOptions,
        apply_run_options,
        resolved_case_keys,
        with_run_options,
    )

    instance: list[DagsterInstance] = []  # made once the first suite is about to run
    tally = _Tally(budget_left=args.budget)
    for suite in loaded:
        if not tags_match(suite.suite.tags, args.tag, args.exclude_tag):
            print(f"{suite.path}: skipped (tags {suite.suite.tags or 'none'})")
            continue
        options = RunOptions(
            threshold=args.threshold,
            keep_workspaces=args.keep_workspaces,
            budget_usd=tally.budget_left,
            cache=not args.no_cache,
            agentv_scoring=args.agentv_scoring,
            targets=args.target or None,
        )
        # The options as the run's steps lay them over the suite: the estimate then sees the
        # result keys the run will (a --threshold grades again; --no-cache reuses nothing).
        selection = select_cases(apply_run_options(suite, options), args)
        if isinstance(selection, str):
            return usage_error(selection)
        agents, cases = selection
        history = storage_folder(args, [suite.slug])
        estimate = _estimate(suite, with_run_options(cases, options), agents, history, storage)
        print(_estimate_line(estimate, history))
        if _stops_before_running(estimate, tally.budget_left):
            print(_over_budget(estimate, tally.budget_left or 0.0), file=sys.stderr)
            tally.cases_not_run += estimate.runs
            continue
        # Some tests picked: the suite's others stay registered (their partitions and failures).
        suite_keys = resolved_case_keys(suite) if args.test_id else None
        outcome = _run_one(instance, suite, agents, cases, suite_keys, options, storage)
        _print_outcome(args, suite, agents, outcome, tally)
    _write_ci_files(args, tally.finished)
    return tally.exit_code()


def _run_one(
    instance: list[DagsterInstance],
    suite: LoadedSuite,
    agents: list[str],
    cases: list[ResolvedCase],
    suite_keys: list[str] | None,
    options: RunOptions,
    storage: str,
) -> SuiteRun:
    """One suite's Dagster runs, its progress on a display of its own; `instance` holds the
    command's instance, made (and the leftovers of dead runs swept) on the first call."""
    from evals_pipeline.cli.interrupts import plan
    from evals_pipeline.progress_bars import PlainProgress, progress_display
    from evals_pipeline.results import ResultStore
    from evals_pipeline.storage.root import open_root
    from evals_pipeline.suites import with_run_options

    # Bars on a terminal, plain lines in logs and pipes (progress_bars.py).
    display = progress_display()
    # The cases as the steps run them, and the store they keep their runs in: a stop counts
    # what is done from there, whichever executor ran it (cli/interrupts.py).
    planned = with_run_options([c for c in cases if c.agent in agents], options)
    plan(planned, ResultStore.of_suite(open_root(storage), suite.slug), display)
    echo = print if isinstance(display, PlainProgress) else display.message
    warn = _to_stderr if isinstance(display, PlainProgress) else display.message
    try:
        if not instance:
            _sweep_leftovers(warn)
            instance.append(_instance(warn))
        from evals_pipeline.defs.suite_run import run_suite

        return run_suite(
            instance[0],
            suite,
            storage,
            agents=agents,
            case_keys=list(dict.fromkeys(c.case_key for c in cases)),
            suite_keys=suite_keys,
            options=options,
            echo=echo,
            display=display,
        )
    finally:
        display.close()


def _print_outcome(
    args: argparse.Namespace,
    suite: LoadedSuite,
    agents: list[str],
    outcome: SuiteRun,
    tally: _Tally,
) -> None:
    """Print a suite's report, and add it to the command's tally."""
    from evals_pipeline.history import read_outcomes

    report = outcome.report
    _print_report(report, agents)
    not_run = [c for c in report.not_run_cases if c.agent in agents]
    tally.cases_not_run += len(not_run)
    if tally.budget_left is not None:
        # The next suite of this command gets what this one left.
        spent = sum(a.cost_usd or 0.0 for a in report.agents if a.agent in agents)
        spent += (report.judge_usage and report.judge_usage.total.cost_usd) or 0.0
        tally.budget_left = max(0.0, tally.budget_left - spent)
    folder = outcome.report_folder
    if args.output:
        folder = Path(args.output).resolve()
        shutil.copytree(outcome.report_folder, folder, dirs_exist_ok=True)
    print(f"\nreport: {folder / 'summary.md'}")
    print(f"html: {folder / 'report.html'}")
    tables = ("cases.parquet", "graders.parquet", "dimensions.parquet", "pairwise.parquet")
    shown = [str(folder / name) for name in tables if (folder / name).exists()]
    print(f"tables: {', '.join([*shown, str(folder / 'results.jsonl')])}")
    tally.finished.append((report, outcome.report_folder))
    outcomes = [o for o in read_outcomes(outcome.report_folder) if o.agent in agents]
    tally.cases_total += len(outcomes)
    tally.cases_errored += sum(o.verdict == "error" for o in outcomes)
    gate = args.threshold if args.threshold is not None else suite.suite.execution.threshold
    if gate is not None and any(o.verdict != "error" and (o.score or 0.0) < gate for o in outcomes):
        tally.below_threshold = True


def _print_report(report: EvalReport, agents: list[str]) -> None:
    """The report's table, reuse, failures, warnings and the cases not run."""
    from evals_pipeline.reporting import render_text_table
    from evals_pipeline.reporting.reuse import reuse_line

    print()
    print(render_text_table(report))
    if reused := reuse_line(report):
        print(f"\n{reused}")
    if report.failures:
        print("\nFailures and errors:")
        for f in report.failures:
            print(for_terminal(f"  {f.agent} / {f.test_id}: {f.reason}"))
    if report.warnings:
        print("\nWarnings:")
        for w in report.warnings:
            print(for_terminal(f"  {w.agent} / {w.test_id}: {'; '.join(w.warnings)}"))
    not_run = [c for c in report.not_run_cases if c.agent in agents]
    if not_run:
        print(for_terminal(f"\nNot run ({len(not_run)}): {not_run[0].reason}"))
        for c in not_run:
            print(for_terminal(f"  {c.agent} / {c.test_id}"))


def _stops_before_running(estimate: RunEstimate, budget: float | None) -> bool:
    """Whether the run's estimate from past runs, graders and judges included, passes the
    budget: the run does not start. A guess (no past run) never stops it."""
    cost = estimate.cost_usd
    return budget is not None and not estimate.guessed and cost is not None and cost > budget


def _to_stderr(line: str) -> None:
    print(for_terminal(line), file=sys.stderr)


def _sweep_leftovers(say: Callable[[str], None]) -> None:
    """Kill the processes an evals-pipeline run that died left running (reaping/ledger.py),
    before this command starts any."""
    from evals_pipeline.reaping.ledger import sweep_leftovers

    killed = sweep_leftovers()
    if killed:
        say(
            f"killed {len(killed)} process(es) left running by an evals-pipeline run that died "
            f"(pids {', '.join(map(str, killed))})"
        )


def _instance(say: Callable[[str], None]) -> DagsterInstance:
    """The Dagster instance, the runs of runners that died marked failed on it (an in-process
    run killed outright stays STARTED for ever otherwise)."""
    from evals_pipeline.instance.run_recovery import fail_crashed_runs

    instance = cli_instance()
    for run_id in fail_crashed_runs(instance):
        say(f"marked run {run_id} failed: the process that ran it died")
    return instance


def _provider_limits(settings: Settings, given: list[str]) -> dict[str, int] | str:
    """`--limit PROVIDER=N` laid over EVALS_PIPELINE_PROVIDER_LIMITS of `settings`, which the
    run's steps in this process hold (provider_limits.use_limits); the error text when one does
    not parse."""
    from evals_pipeline.provider_limits import LimitsError, parse_limits

    try:
        limits = parse_limits(settings.provider_limits or "")
        limits.update(parse_limits(" ".join(given), source="--limit"))
    except LimitsError as exc:
        return str(exc)
    return limits


def _estimate(
    suite: LoadedSuite,
    cases: Sequence[ResolvedCase],
    agents: list[str],
    root: Path,
    storage: str,
) -> RunEstimate:
    """The cost and time of running `cases` x `agents`, from the suite's last reports (else a
    guess from its targets' token prices), the trials whose stored results the run reuses from
    the result store at `storage` costing nothing."""
    from evals_pipeline.history.estimate import estimate_run, history_of, planned_runs
    from evals_pipeline.results import ResultStore
    from evals_pipeline.storage.root import open_root

    store = ResultStore.of_suite(open_root(storage), suite.slug)
    planned = planned_runs([c for c in cases if c.agent in agents], store)
    prices = {a: getattr(suite.targets.get(a), "pricing", None) for a in agents}
    history = history_of(root, suite.slug)
    return estimate_run(suite.slug, planned, history, suite.suite.execution.workers, prices)


def _estimate_line(estimate: RunEstimate, root: Path, budget: float | None = None) -> str:
    """The estimate's line, and with a budget it exceeds what the budget does to the run."""
    from evals_pipeline.history.estimate import render_estimate

    line = render_estimate(estimate, root)
    if budget is None or not estimate.cost_usd or estimate.cost_usd <= budget:
        return line
    if not estimate.guessed:
        return line + f"\n{_over_budget(estimate, budget)}"
    # A guess does not stop a run: the run stops once its agents' spend reaches the budget.
    to_run = estimate.runs - estimate.reused
    runs = math.ceil(budget / (estimate.cost_usd / to_run) - 1e-9)
    return line + f"\nthe budget of ${budget:g} stops the run after ~{runs} of {to_run} runs"


def _over_budget(estimate: RunEstimate, budget: float) -> str:
    """Why a run whose estimate (graders and judges included) passes its budget does not start."""
    return (
        f"the budget of ${budget:g} is under the estimate of ~${estimate.cost_usd or 0.0:.4f} "
        "(agents, graders and judges, from past runs): the run does not start; raise --budget, "
        "or run fewer cases (--test-id, --target)"
    )


def cmd_estimate(args: argparse.Namespace) -> int:
    from evals_pipeline.suites import RunOptions, apply_run_options, with_run_options

    loaded = load_suites(args.suites)
    if isinstance(loaded, int):
        return loaded
    root = storage_folder(args)
    options = RunOptions(cache=not args.no_cache, targets=args.target or None)
    for suite in loaded:
        selection = select_cases(apply_run_options(suite, options), args)
        if isinstance(selection, str):
            return usage_error(selection)
        agents, cases = selection
        cases = with_run_options(cases, options)
        estimate = _estimate(suite, cases, agents, root, storage_url(args))
        print(_estimate_line(estimate, root, args.budget))
    return EXIT_OK


def _check_auth(loaded: list[LoadedSuite], names: list[str]) -> int:
    """Say which auth each agent CLI target will use; with none, fail before any case runs."""
    from evals_pipeline.adapters.identity import target_auth

    problems: dict[str, str] = {}
    for suite in loaded:
        agents = select_agents(suite, names)
        for agent in agents if isinstance(agents, list) else []:
            plan = target_auth(suite.targets[agent])
            if plan is None or agent in problems:
                continue
            if plan.problem:
                problems[agent] = plan.problem
            else:
                print(f"auth: {agent}: {plan.describe()}")
    for problem in problems.values():
        usage_error(problem)
    return EXIT_USAGE if problems else EXIT_OK


def _write_ci_files(args: argparse.Namespace, finished: list[tuple[EvalReport, Path]]) -> None:
    """`--junit FILE` and `--summary-md FILE` over every suite of the run."""
    from evals_pipeline.reporting.junit import render_junit
    from evals_pipeline.reporting.pr_summary import render_pr_summary

    if args.junit:
        Path(args.junit).parent.mkdir(parents=True, exist_ok=True)
        Path(args.junit).write_text(render_junit(finished))
        print(f"junit: {Path(args.junit).resolve()}")
    if args.summary_md:
        Path(args.summary_md).parent.mkdir(parents=True, exist_ok=True)
        Path(args.summary_md).write_text(render_pr_summary([r for r, _ in finished]))
        print(f"summary: {Path(args.summary_md).resolve()}")
