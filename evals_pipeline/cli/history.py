"""`runs` and `compare`: the reports in the storage root, and two of them side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evals_pipeline.cli.exits import EXIT_OK, EXIT_THRESHOLD, usage_error
from evals_pipeline.cli.locations import storage_folder

if TYPE_CHECKING:
    from evals_pipeline.models.history import RunEntry


def cmd_runs(args: argparse.Namespace) -> int:
    from evals_pipeline.history import HistoryError, pick_suite, suite_entries, suites_in
    from evals_pipeline.reporting.history_text import render_runs

    root = storage_folder(args)
    try:
        suites = [pick_suite(root, args.suite)] if args.suite else suites_in(root)
    except HistoryError as exc:
        return usage_error(str(exc))
    entries = [e for s in suites for e in suite_entries(root, s)]
    if not entries:
        return usage_error(f"no reports under {root}; run a suite first (evals-pipeline run)")
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

    root = storage_folder(args)
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
        return usage_error(str(exc))
    if _same_run(before, after):
        # Not an error (a script may compare a run with itself), but no change can show.
        print(
            f"warning: {args.run_a} and {args.run_b} are the same report ({after.run_id} of "
            f"{after.suite}): nothing can differ; give two runs (see `evals-pipeline runs`)",
            file=sys.stderr,
        )
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


def _same_run(before: RunEntry, after: RunEntry) -> bool:
    """Whether two entries are one report, named twice (by run id, prefix or folder)."""
    same_id = before.run_id is not None and before.run_id == after.run_id
    return before.folder == after.folder or (same_id and before.suite == after.suite)
