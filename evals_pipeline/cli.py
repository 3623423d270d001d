"""The `evals-pipeline` command: run, estimate, runs, compare, validate, schema, register, import,
assert, model-server."""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evals_pipeline.suites import LoadedSuite, RunOptions, SuiteError, load_suite, slugify

if TYPE_CHECKING:
    from dagster import DagsterInstance

    from evals_pipeline.grading import standalone as standalone_types
    from evals_pipeline.models.case import ResolvedCase
    from evals_pipeline.models.report import EvalReport

# As `agentv eval`: 1 when a case scores below the run's threshold, 2 on usage errors and when
# every case errored.
EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE = 0, 1, 2
EXIT_ALL_ERRORS = 2
# Ours: the run budget (`--budget`) was spent before every case ran; the results are incomplete.
EXIT_NOT_RUN = 3
DEFAULT_DAGSTER_HOME = ".evals/dagster"


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _load(paths: Sequence[str], *, to_run: bool = True) -> list[LoadedSuite] | int:
    """Load suites, printing their errors and warnings. `to_run`: the targets must resolve too
    (every command but `validate`, which, as `agentv validate`, checks the files only)."""
    loaded, failed = [], False
    for path in paths:
        try:
            suite = load_suite(path)
            if suite.run_issues and to_run:
                raise SuiteError(suite.run_issues)
        except SuiteError as exc:
            print(exc, file=sys.stderr)
            failed = True
            continue
        for warning in suite.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for issue in [] if to_run else suite.run_issues:
            print(f"warning: when run: {issue}", file=sys.stderr)
        loaded.append(suite)
    return EXIT_USAGE if failed else loaded


def _select_agents(suite: LoadedSuite, names: list[str]) -> list[str] | str:
    if not names:
        return list(suite.targets)
    chosen = []
    for name in names:
        agent = slugify(name)
        if agent not in suite.targets:
            return f"target {name!r} is not in {suite.path}; its targets are: {', '.join(suite.targets)}"
        chosen.append(agent)
    return chosen


def _selection(
    suite: LoadedSuite, args: argparse.Namespace
) -> tuple[list[str], list[ResolvedCase]] | str:
    """The agents (`--target`) and cases (`--test-id`) of `suite` a command covers, with
    `--workers` laid over the suite; or why the selection is empty or wrong."""
    from evals_pipeline.suites import resolve_cases

    agents = _select_agents(suite, args.target)
    if isinstance(agents, str):
        return agents
    if args.workers:
        suite.suite.execution.workers = args.workers
    cases = [c for c in resolve_cases(suite) if _selected(c.test_id, args.test_id)]
    if not cases:
        return f"no test of {suite.path} matches --test-id {' '.join(args.test_id)}"
    return agents, cases


def _selected(test_id: str, patterns: list[str]) -> bool:
    """AgentV's `--test-id`: any of the glob patterns matches the test id (all when none)."""
    return not patterns or any(fnmatch.fnmatchcase(test_id, p) for p in patterns)


def _tags_match(tags: list[str], required: list[str], excluded: list[str]) -> bool:
    """AgentV's `--tag` (the file has every one) and `--exclude-tag` (it has none of them)."""
    return all(t in tags for t in required) and not any(t in tags for t in excluded)


def _instance() -> DagsterInstance:
    """The local Dagster instance: DAGSTER_HOME, else `.evals/dagster` (created on first use)."""
    from evals_pipeline.defs.instance import local_instance

    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(DEFAULT_DAGSTER_HOME).resolve())))
    return local_instance(home)


def cmd_validate(args: argparse.Namespace) -> int:
    from evals_pipeline.suites import discover_suites, resolve_cases

    paths = discover_suites(args.paths)
    if not paths:
        return _error(f"no suite files (*.eval.yaml, EVAL.yaml) under {', '.join(args.paths)}")
    loaded = _load([str(p) for p in paths], to_run=False)
    if isinstance(loaded, int):
        return loaded
    for suite in loaded:
        if suite.run_issues:
            print(f"ok: {suite.path} ({len(suite.suite.tests)} tests; its targets do not resolve)")
            continue
        cases = resolve_cases(suite)
        print(
            f"ok: {suite.path} ({len(suite.suite.tests)} tests x {len(suite.targets)} targets = {len(cases)} partitions)"
        )
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from evals_pipeline.suites import suite_json_schema, targets_json_schema

    schema = targets_json_schema() if args.targets else suite_json_schema()
    print(json.dumps(schema, indent=2))
    return EXIT_OK


def cmd_register(args: argparse.Namespace) -> int:
    from evals_pipeline.defs.suite_run import register_cases
    from evals_pipeline.suites import resolve_cases

    loaded = _load(args.suites)
    if isinstance(loaded, int):
        return loaded
    instance = _instance()
    for suite in loaded:
        keys = list(dict.fromkeys(c.case_key for c in resolve_cases(suite)))
        registered = register_cases(instance, suite, keys)
        print(
            f"{suite.slug}: {len(registered)} cases registered for agents {', '.join(suite.targets)}"
        )
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from evals_pipeline.defs.executor import ExecutorSettingError, executor_name
    from evals_pipeline.defs.resources import storage_root_from_env
    from evals_pipeline.defs.run_recovery import recover_on_start
    from evals_pipeline.defs.suite_run import run_suite
    from evals_pipeline.history import read_outcomes
    from evals_pipeline.progress_bars import PlainProgress, progress_display
    from evals_pipeline.reporting import render_text_table
    from evals_pipeline.reporting.reuse import reuse_line

    loaded = _load(args.suites)
    if isinstance(loaded, int):
        return loaded
    try:
        executor_name()
    except ExecutorSettingError as exc:
        return _error(str(exc))
    auth_failed = _check_auth(loaded, args.target)
    if auth_failed:
        return auth_failed
    limits = _set_provider_limits(args.limit)
    if isinstance(limits, str):
        return _error(limits)
    if args.storage:
        os.environ["EVALS_PIPELINE_STORAGE"] = args.storage
    storage = storage_root_from_env()
    instance = _instance()
    for line in recover_on_start(instance):  # what a run killed outright left behind
        print(line, file=sys.stderr)
    finished: list[tuple[EvalReport, Path]] = []
    cases_total = cases_errored = cases_not_run = 0
    below_threshold = False
    budget_left = args.budget
    for suite in loaded:
        if not _tags_match(suite.suite.tags, args.tag, args.exclude_tag):
            print(f"{suite.path}: skipped (tags {suite.suite.tags or 'none'})")
            continue
        selection = _selection(suite, args)
        if isinstance(selection, str):
            return _error(selection)
        agents, cases = selection
        keys = list(dict.fromkeys(c.case_key for c in cases))
        history = _storage_root(args, [suite.slug])
        print(_estimate_line(suite, cases, agents, history, budget_left))
        options = RunOptions(
            threshold=args.threshold,
            keep_workspaces=args.keep_workspaces,
            budget_usd=budget_left,
            cache=not args.no_cache,
        )
        # Bars on a terminal, plain lines in logs and pipes (progress_bars.py).
        display = progress_display()
        echo = print if isinstance(display, PlainProgress) else display.message
        try:
            outcome = run_suite(
                instance,
                suite,
                storage,
                agents=agents,
                case_keys=keys,
                options=options,
                echo=echo,
                display=display,
            )
        finally:
            display.close()
        report = outcome.report
        print()
        print(render_text_table(report))
        if reused := reuse_line(report):
            print(f"\n{reused}")
        if report.failures:
            print("\nFailures and errors:")
            for f in report.failures:
                print(f"  {f.agent} / {f.test_id}: {f.reason}")
        if report.warnings:
            print("\nWarnings:")
            for w in report.warnings:
                print(f"  {w.agent} / {w.test_id}: {'; '.join(w.warnings)}")
        not_run = [c for c in report.not_run_cases if c.agent in agents]
        if not_run:
            print(f"\nNot run ({len(not_run)}): {not_run[0].reason}")
            for c in not_run:
                print(f"  {c.agent} / {c.test_id}")
        cases_not_run += len(not_run)
        if budget_left is not None:
            # The next suite of this command gets what this one left.
            spent = sum(a.cost_usd for a in report.agents if a.agent in agents)
            budget_left = max(0.0, budget_left - spent)
        folder = outcome.report_folder
        if args.output:
            folder = Path(args.output).resolve()
            shutil.copytree(outcome.report_folder, folder, dirs_exist_ok=True)
        print(f"\nreport: {folder / 'summary.md'}")
        print(f"html: {folder / 'report.html'}")
        tables = ("cases.parquet", "graders.parquet", "dimensions.parquet", "pairwise.parquet")
        shown = [str(folder / name) for name in tables if (folder / name).exists()]
        print(f"tables: {', '.join([*shown, str(folder / 'results.jsonl')])}")
        finished.append((report, outcome.report_folder))
        outcomes = [o for o in read_outcomes(outcome.report_folder) if o.agent in agents]
        cases_total += len(outcomes)
        cases_errored += sum(o.verdict == "error" for o in outcomes)
        gate = args.threshold if args.threshold is not None else suite.suite.execution.threshold
        if gate is not None and any(
            o.verdict != "error" and (o.score or 0.0) < gate for o in outcomes
        ):
            below_threshold = True
    _write_ci_files(args, finished)
    if cases_total and cases_errored == cases_total:
        print("every case errored: nothing was evaluated", file=sys.stderr)
        return EXIT_ALL_ERRORS
    if below_threshold:
        return EXIT_THRESHOLD
    if cases_not_run:
        print(f"{cases_not_run} cases not run: the run budget was spent", file=sys.stderr)
        return EXIT_NOT_RUN
    return EXIT_OK


def _set_provider_limits(given: list[str]) -> dict[str, int] | str:
    """`--limit PROVIDER=N` laid over $EVALS_PIPELINE_PROVIDER_LIMITS, written back to it so
    every step of the run (and any process it starts) holds them; the error text when one does
    not parse."""
    from evals_pipeline.provider_limits import LIMITS_ENV, LimitsError, parse_limits

    try:
        limits = parse_limits(os.environ.get(LIMITS_ENV, ""))
        limits.update(parse_limits(" ".join(given), source="--limit"))
    except LimitsError as exc:
        return str(exc)
    if limits:
        os.environ[LIMITS_ENV] = ",".join(f"{p}={n}" for p, n in limits.items())
    return limits


def _estimate_line(
    suite: LoadedSuite,
    cases: Sequence[ResolvedCase],
    agents: list[str],
    root: Path,
    budget: float | None = None,
) -> str:
    """The cost and time estimate of running `cases` x `agents`, from the suite's last reports."""
    from evals_pipeline.history.estimate import (
        PlannedRun,
        estimate_run,
        history_of,
        render_estimate,
    )

    planned = [PlannedRun(c.case_key, c.agent, c.trials.count) for c in cases if c.agent in agents]
    estimate = estimate_run(
        suite.slug, planned, history_of(root, suite.slug), suite.suite.execution.workers
    )
    line = render_estimate(estimate, root)
    if budget is not None and estimate.cost_usd and estimate.cost_usd > budget:
        # Runs start while the spend is below the budget: the one that reaches it runs too.
        runs = math.ceil(budget / (estimate.cost_usd / estimate.runs) - 1e-9)
        line += f"\nthe budget of ${budget:g} stops the run after ~{runs} of {estimate.runs} runs"
    return line


def cmd_estimate(args: argparse.Namespace) -> int:

    loaded = _load(args.suites)
    if isinstance(loaded, int):
        return loaded
    root = _storage_root(args)
    for suite in loaded:
        selection = _selection(suite, args)
        if isinstance(selection, str):
            return _error(selection)
        agents, cases = selection
        print(_estimate_line(suite, cases, agents, root, args.budget))
    return EXIT_OK


def _check_auth(loaded: list[LoadedSuite], names: list[str]) -> int:
    """Say which auth each agent CLI target will use; with none, fail before any case runs."""
    from evals_pipeline.adapters.identity import target_auth

    problems: dict[str, str] = {}
    for suite in loaded:
        agents = _select_agents(suite, names)
        for agent in agents if isinstance(agents, list) else []:
            plan = target_auth(suite.targets[agent])
            if plan is None or agent in problems:
                continue
            if plan.problem:
                problems[agent] = plan.problem
            else:
                print(f"auth: {agent}: {plan.describe()}")
    for problem in problems.values():
        _error(problem)
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


def _storage_root(args: argparse.Namespace, suites: list[str] | None = None) -> Path:
    """The storage root's local folder, with the report files of `suites` (default: all) that
    the history reads fetched into it when the root is an object store."""
    from evals_pipeline.defs.resources import storage_root, storage_root_from_env
    from evals_pipeline.history import mirror_reports
    from evals_pipeline.storage.root import open_root

    url = storage_root(args.storage) if args.storage else storage_root_from_env()
    return mirror_reports(open_root(url), suites)


def cmd_runs(args: argparse.Namespace) -> int:
    from evals_pipeline.history import HistoryError, pick_suite, suite_entries, suites_in
    from evals_pipeline.reporting.history_text import render_runs

    root = _storage_root(args)
    try:
        suites = [pick_suite(root, args.suite)] if args.suite else suites_in(root)
    except HistoryError as exc:
        return _error(str(exc))
    entries = [e for s in suites for e in suite_entries(root, s)]
    if not entries:
        return _error(f"no reports under {root}; run a suite first (evals-pipeline run)")
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
    else:
        print(render_runs(entries), end="")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from evals_pipeline.history import (
        HistoryError,
        compare_stored,
        find_run,
        latest_two,
        previous_entry,
        suite_entries,
    )
    from evals_pipeline.reporting.history_text import render_comparison

    root = _storage_root(args)
    try:
        if args.run_a and args.run_b:
            before = find_run(root, args.run_a, args.suite)
            after = find_run(root, args.run_b, args.suite)
        elif args.run_a:
            after = find_run(root, args.run_a, args.suite)
            found = previous_entry(suite_entries(Path(after.folder).parents[2], after.suite), after)
            if found is None:
                raise HistoryError(f"run {after.run_id} is the first report of {after.suite}")
            before = found
        else:
            before, after = latest_two(root, args.suite)
    except HistoryError as exc:
        return _error(str(exc))
    comparison = compare_stored(before, after)
    if args.json:
        print(comparison.model_dump_json(indent=2))
    else:
        print(render_comparison(comparison), end="")
    # As `agentv compare`: exit 1 when the later run scores lower on the cases both ran.
    dropped = any(
        a.mean_score_after < a.mean_score_before
        for a in comparison.agents
        if a.mean_score_after is not None and a.mean_score_before is not None
    )
    return EXIT_THRESHOLD if dropped else EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from evals_pipeline.enrichers.streams import detect_stream_kind, parse_stream
    from evals_pipeline.secrets import Redactor, secret_values

    files = [Path(f) for f in args.files]
    if args.test_id and len(files) > 1:
        return _error("--test-id names one session; import several files without it")
    into = Path(args.into)
    into.mkdir(parents=True, exist_ok=True)
    redactor = Redactor(secret_values())
    for path in files:
        if not path.is_file():
            return _error(f"{path}: no such file")
        text = path.read_text(errors="replace")
        kind = detect_stream_kind(text)
        if kind is None:
            return _error(
                f"{path}: not a Claude Code, Codex CLI or pi session (JSONL stream or session "
                "file); an AgentV output file can be used by a replay target as it is"
            )
        test_id = args.test_id or path.name.removesuffix(".jsonl").removesuffix(".json")
        destination = into / f"{test_id}.jsonl"
        destination.write_text(redactor.text(text))
        session = parse_stream(kind, text)
        tools = ", ".join(session.tool_sequence()) or "no tools"
        usage = session.token_usage
        tokens = f"{usage.total} tokens" if usage else "no token counts"
        print(
            f"{path} -> {destination}: {kind} session {session.session_id or '?'}, "
            f"model {session.model or '?'}, {len(session.tool_sequence())} tool calls ({tools}), "
            f"{tokens}"
        )
        for warning in session.parse_warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    print(
        f"\ngrade them with a replay target: {{name: imported, provider: replay, "
        f"sessions_dir: {into}}}, then `evals-pipeline run SUITE --target imported`"
    )
    return EXIT_OK


def cmd_model_server(args: argparse.Namespace) -> int:
    from evals_pipeline.model_server import ScriptError, serve

    try:
        serve(
            Path(args.script),
            host=args.host,
            port=args.port,
            log_path=Path(args.log) if args.log else None,
        )
    except ScriptError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def cmd_assert(args: argparse.Namespace) -> int:
    """Run one grader without an agent and print its verdict; exit 0 at score >= 0.5, else 1."""
    from evals_pipeline.grading import standalone
    from evals_pipeline.suites import resolve_cases

    try:
        if args.file:
            answer = standalone.read_answer_file(Path(args.file))
        elif args.session:
            answer = standalone.Answer(
                input=args.agent_input or "", session_file=Path(args.session).resolve()
            )
        elif args.agent_output is not None:
            answer = standalone.Answer(output=args.agent_output, input=args.agent_input or "")
        else:
            return _error("give the answer: --agent-output TEXT, --file FILE or --session FILE")
        if args.suite is None:
            if args.name is None:
                return _error("name the grader (.agentv/graders/<name>.*), or give --suite")
            script = standalone.find_grader(args.name, Path.cwd())
            verdict = standalone.run_named_grader(script, answer, Path.cwd())
        else:
            if args.test is None:
                return _error("--suite needs --test ID: which test's assertion to run")
            loaded = _load([args.suite])
            if isinstance(loaded, int):
                return loaded
            agents = _select_agents(loaded[0], [args.target] if args.target else [])
            if isinstance(agents, str):
                return _error(agents)
            cases = [c for c in resolve_cases(loaded[0], agents=agents) if c.test_id == args.test]
            if not cases:
                return _error(f"no test '{args.test}' in {args.suite}")
            spec = standalone.pick_assertion(cases[0], args.name)
            verdict = standalone.grade_suite_assertion(cases[0], spec, answer)
    except standalone.AssertInputError as exc:
        return _error(str(exc))
    _print_verdict(verdict, as_json=args.json)
    return EXIT_OK if verdict.passed else EXIT_THRESHOLD


def _print_verdict(verdict: standalone_types.Verdict, *, as_json: bool) -> None:
    from evals_pipeline.grading.standalone import PASS_SCORE

    evaluation = verdict.evaluation
    if evaluation.stderr:
        print(evaluation.stderr.rstrip(), file=sys.stderr)
    if as_json:
        print(json.dumps(verdict.result_json(), indent=2, ensure_ascii=False))
        return
    score = "none" if evaluation.score is None else f"{evaluation.score:g}"
    outcome = "error" if evaluation.error else "pass" if verdict.passed else "fail"
    print(f"{verdict.name}: {outcome} (score {score}; pass at >= {PASS_SCORE})")
    for passed, label in ((True, "hits"), (False, "misses")):
        lines = [a for a in evaluation.assertions if a.passed is passed]
        if lines:
            print(f"{label}:")
        for a in lines:
            evidence = f" ({a.evidence})" if a.evidence else ""
            print(f"  {'✓' if passed else '✗'} {a.text}{evidence}")
    if evaluation.details:
        print("details: " + json.dumps(evaluation.details, ensure_ascii=False))
    if evaluation.error:
        print(f"error: {evaluation.error}")


def _unit_interval(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not an amount in USD (e.g. 2.50)") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not an amount in USD >= 0")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evals-pipeline",
        description="Evaluate coding agents on your own tasks, as a Dagster asset graph.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="run whole suites through the asset graph and print the summary"
    )
    run.add_argument("suites", nargs="+", metavar="SUITE", help="eval YAML file(s)")
    run.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME",
        help="only this target (repeatable)",
    )
    run.add_argument(
        "--test-id",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the tests whose id matches (repeatable, glob; as agentv eval --test-id)",
    )
    run.add_argument("--output", metavar="DIR", help="also copy the report files into DIR")
    run.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="concurrent agents (default: the suite's execution.workers)",
    )
    run.add_argument(
        "--storage",
        metavar="DIR",
        help="storage root (default: $EVALS_PIPELINE_STORAGE or .evals/storage)",
    )
    run.add_argument(
        "--threshold",
        type=_unit_interval,
        metavar="X",
        help="pass score (0-1) of every test that sets no execution.threshold (default 0.8); "
        "as agentv, exit 1 when a case scores below it (default: the suite's "
        "execution.threshold; without either, failures do not change the exit code)",
    )
    run.add_argument(
        "--junit",
        metavar="FILE",
        help="write JUnit XML: one testcase per case x target, failures and errors with reasons",
    )
    run.add_argument(
        "--summary-md",
        metavar="FILE",
        help="write a Markdown summary fit for a pull-request comment",
    )
    run.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only suites whose tags include TAG (repeatable: all of them)",
    )
    run.add_argument(
        "--exclude-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="skip suites whose tags include TAG (repeatable)",
    )
    run.add_argument(
        "--budget",
        type=_usd,
        metavar="USD",
        help="spend cap of the whole run over every agent and suite: once the finished agent "
        "runs cost this much, no new one starts, runs in flight finish, and the rest are "
        "'not run' (exit 3 when nothing failed)",
    )
    run.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="PROVIDER=N",
        help="at most N agent runs (claude-code, codex, pi-agent, cli, ...) or LLM calls "
        "(anthropic, openai, ...) of PROVIDER at once, whatever the workers (repeatable; "
        "default: $EVALS_PIPELINE_PROVIDER_LIMITS)",
    )
    run.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep every run's workspace (default: kept only when the case fails or errors)",
    )
    run.add_argument(
        "--no-cache",
        action="store_true",
        help="run every case again, even those whose stored result is still current "
        "(default: reuse them; see docs/durability.md)",
    )
    run.add_argument(
        "--verbose", action="store_true", help="accepted for agentv; progress is always printed"
    )
    run.set_defaults(func=cmd_run)

    estimate = sub.add_parser(
        "estimate",
        help="print what running suites would cost and take, from their last runs' figures, "
        "without running them (run prints the same line before it starts)",
    )
    estimate.add_argument("suites", nargs="+", metavar="SUITE", help="eval YAML file(s)")
    estimate.add_argument("--target", action="append", default=[], metavar="NAME")
    estimate.add_argument("--test-id", action="append", default=[], metavar="GLOB")
    estimate.add_argument("--workers", type=int, metavar="N", help="as for run")
    estimate.add_argument("--budget", type=_usd, metavar="USD", help="as for run")
    estimate.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    estimate.set_defaults(func=cmd_estimate)

    runs = sub.add_parser("runs", help="list the reports in the storage root, oldest first")
    runs.add_argument("--suite", metavar="NAME", help="only this suite")
    runs.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    runs.add_argument("--json", action="store_true", help="print the entries as JSON")
    runs.set_defaults(func=cmd_runs)

    compare = sub.add_parser(
        "compare",
        help="compare two reports of a suite: per-target McNemar and bootstrap, changed cases",
    )
    compare.add_argument(
        "run_a",
        nargs="?",
        metavar="RUN_A",
        help="the earlier run: a run id, a unique prefix of one, or a report folder (default: "
        "the report before the latest; with RUN_A alone, RUN_A against its previous report)",
    )
    compare.add_argument(
        "run_b", nargs="?", metavar="RUN_B", help="the later run (default: the latest)"
    )
    compare.add_argument("--suite", metavar="NAME", help="the suite, when several have reports")
    compare.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.set_defaults(func=cmd_compare)

    validate = sub.add_parser(
        "validate", help="check suite files; errors name file:line:column and the fix"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="suite files or folders")
    validate.set_defaults(func=cmd_validate)

    schema = sub.add_parser(
        "schema", help="print the JSON Schema of the suite format (for editors)"
    )
    schema.add_argument(
        "--targets", action="store_true", help="the schema of .agentv/targets.yaml instead"
    )
    schema.set_defaults(func=cmd_schema)

    register = sub.add_parser(
        "register", help="register a suite's cases as Dagster partitions without running"
    )
    register.add_argument("suites", nargs="+", metavar="SUITE")
    register.set_defaults(func=cmd_register)

    importer = sub.add_parser(
        "import",
        help="turn existing claude, codex or pi session files into recordings a replay target "
        "grades without running an agent",
    )
    importer.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="stream-json/exec --json/--mode json output, or a CLI's own session file",
    )
    importer.add_argument(
        "--into", required=True, metavar="DIR", help="the replay target's sessions_dir"
    )
    importer.add_argument(
        "--test-id", metavar="ID", help="the test the session answers (default: the file name)"
    )
    importer.set_defaults(func=cmd_import)

    asserter = sub.add_parser(
        "assert",
        help="run one grader without an agent (AgentV's `agentv eval assert`): a grader in "
        ".agentv/graders/ by name, or an assertion of a suite; exit 0 at score >= 0.5",
    )
    asserter.add_argument(
        "name",
        nargs="?",
        help="grader name (.agentv/graders/<name>.{ts,js,mts,mjs,py,sh}, searched upwards from "
        "here); with --suite, the assertion's name, type or 1-based number",
    )
    asserter.add_argument("--agent-output", metavar="TEXT", help="the agent's answer")
    asserter.add_argument("--agent-input", metavar="TEXT", help="the prompt it answered")
    asserter.add_argument("--file", metavar="FILE", help="a JSON file {output, input}")
    asserter.add_argument(
        "--session",
        metavar="FILE",
        help="a recorded session: a claude/codex/pi stream or an AgentV cli output file",
    )
    asserter.add_argument("--suite", metavar="FILE", help="take the assertion from this suite")
    asserter.add_argument("--test", metavar="ID", help="with --suite: the test")
    asserter.add_argument(
        "--target", metavar="NAME", help="with --suite: the target (default: first)"
    )
    asserter.add_argument(
        "--json", action="store_true", help="print the grader's result JSON, as agentv does"
    )
    asserter.set_defaults(func=cmd_assert)

    server = sub.add_parser(
        "model-server",
        help="serve scripted model turns (Anthropic, OpenAI Responses, Chat Completions) so the "
        "real agent CLIs run offline",
    )
    server.add_argument("--script", required=True, metavar="FILE", help="turn script (YAML/JSON)")
    server.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any)")
    server.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    server.add_argument("--log", metavar="FILE", help="log every request and reply as JSONL")
    server.set_defaults(func=cmd_model_server)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
