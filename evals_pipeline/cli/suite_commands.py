"""`validate`, `schema` and `register`: suite files checked, their schema, their partitions."""

from __future__ import annotations

import argparse
import json

from evals_pipeline.cli.exits import EXIT_OK
from evals_pipeline.cli.locations import cli_instance
from evals_pipeline.cli.selection import load_suites


def cmd_validate(args: argparse.Namespace) -> int:
    from evals_pipeline.suites import resolve_cases

    loaded = load_suites(args.paths, to_run=False, strict=getattr(args, "strict", False))
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
    from evals_pipeline.defs.partitions import register_cases
    from evals_pipeline.suites import resolved_case_keys

    loaded = load_suites(args.suites)
    if isinstance(loaded, int):
        return loaded
    instance = cli_instance(args.settings)
    for suite in loaded:
        registered = register_cases(instance, suite.slug, resolved_case_keys(suite))
        print(
            f"{suite.slug}: {len(registered)} cases registered for agents {', '.join(suite.targets)}"
        )
    return EXIT_OK
