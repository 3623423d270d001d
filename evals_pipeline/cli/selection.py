"""Which suites, agents and cases a command covers: loading with its errors, `--target`,
`--test-id`, `--tag`."""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evals_pipeline.cli.exits import EXIT_USAGE, usage_error

if TYPE_CHECKING:
    from pathlib import Path

    from evals_pipeline.models.case import ResolvedCase
    from evals_pipeline.suites import LoadedSuite


def suite_files(paths: Sequence[str]) -> list[str] | int:
    """The suite files `paths` name, for every command that takes suites: a file as given, a
    folder searched for eval files (discover_suites); the exit code when a path is missing or
    none is found."""
    from evals_pipeline.suites import SuiteError, discover_suites

    found: dict[str, None] = {}  # in the order given, each once; a folder's files sorted
    try:
        for path in paths:
            found.update(dict.fromkeys(str(p) for p in discover_suites([path])))
    except SuiteError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    if not found:
        return usage_error(f"no suite files (*.eval.yaml, EVAL.yaml) under {', '.join(paths)}")
    return list(found)


def load_suites(
    paths: Sequence[str],
    *,
    to_run: bool = True,
    strict: bool = False,
    targets_file: Path | None = None,
) -> list[LoadedSuite] | int:
    """Load the suites `paths` name (files, or folders holding them: suite_files), printing
    their errors and warnings. `to_run`: the targets must resolve too (every command but
    `validate`, which, as `agentv validate`, checks the files only). `strict` (`--strict`):
    every warning is an error, for teams that want typos to fail CI. `targets_file`: the
    targets file of `run --targets`."""
    # The suite models load with the command that reads a suite, not with every command (~1 s).
    from evals_pipeline.suites import SuiteError, load_suite

    files = suite_files(paths)
    if isinstance(files, int):
        return files
    loaded, failed = [], False
    for path in files:
        try:
            suite = load_suite(path, targets_file)
            if suite.run_issues and to_run:
                raise SuiteError(suite.run_issues)
        except SuiteError as exc:
            print(exc, file=sys.stderr)
            failed = True
            continue
        kind = "error (--strict)" if strict else "warning"
        for warning in suite.warnings:
            print(f"{kind}: {warning}", file=sys.stderr)
        for issue in [] if to_run else suite.run_issues:
            print(f"{kind}: when run: {issue}", file=sys.stderr)
        if strict and (suite.warnings or (suite.run_issues and not to_run)):
            failed = True
            continue
        loaded.append(suite)
    return EXIT_USAGE if failed else loaded


def select_agents(suite: LoadedSuite, names: list[str]) -> list[str] | str:
    from evals_pipeline.suites import slugify

    if not names:
        return list(suite.targets)
    chosen = []
    for name in names:
        agent = slugify(name)
        if agent not in suite.targets:
            return f"target {name!r} is not in {suite.path}; its targets are: {', '.join(suite.targets)}"
        chosen.append(agent)
    return chosen


def select_cases(
    suite: LoadedSuite, args: argparse.Namespace
) -> tuple[list[str], list[ResolvedCase]] | str:
    """The agents (`--target`) and cases (`--test-id`) of `suite` a command covers, with
    `--workers` laid over the suite; or why the selection is empty or wrong."""
    from evals_pipeline.suites import resolve_cases

    agents = select_agents(suite, args.target)
    if isinstance(agents, str):
        return agents
    if args.workers:
        suite.suite.execution.workers = args.workers
    # `--target` is AgentV's cliTargets: the run's targets, which tests choose among.
    targets = args.target or None
    cases = [c for c in resolve_cases(suite, targets=targets) if selected(c.test_id, args.test_id)]
    if not cases:
        return f"no test of {suite.path} matches --test-id {' '.join(args.test_id)}"
    return agents, cases


def selected(test_id: str, patterns: list[str]) -> bool:
    """AgentV's `--test-id`: any of the glob patterns matches the test id (all when none)."""
    return not patterns or any(fnmatch.fnmatchcase(test_id, p) for p in patterns)


def tags_match(tags: list[str], required: list[str], excluded: list[str]) -> bool:
    """AgentV's `--tag` (the file has every one) and `--exclude-tag` (it has none of them)."""
    return all(t in tags for t in required) and not any(t in tags for t in excluded)
