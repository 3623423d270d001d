"""Suite files: YAML loading with file:line errors, targets, cases, partition-key slugs.

Pure Python, no Dagster: the Dagster layer calls `load_suite` and `resolve_cases`.
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.suites.discovery import discover_suites
    from evals_pipeline.suites.errors import SuiteError, SuiteIssue
    from evals_pipeline.suites.loader import LoadedSuite, load_suite
    from evals_pipeline.suites.resolve import resolve_cases, resolved_case_keys
    from evals_pipeline.suites.run_options import (
        RunOptions,
        apply_run_options,
        run_cases,
        with_run_options,
    )
    from evals_pipeline.suites.schema import suite_json_schema, targets_json_schema
    from evals_pipeline.suites.slugs import slugify

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "LoadedSuite": "loader",
    "RunOptions": "run_options",
    "SuiteError": "errors",
    "SuiteIssue": "errors",
    "apply_run_options": "run_options",
    "discover_suites": "discovery",
    "load_suite": "loader",
    "resolve_cases": "resolve",
    "resolved_case_keys": "resolve",
    "run_cases": "run_options",
    "slugify": "slugs",
    "suite_json_schema": "schema",
    "targets_json_schema": "schema",
    "with_run_options": "run_options",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "LoadedSuite",
    "RunOptions",
    "SuiteError",
    "SuiteIssue",
    "apply_run_options",
    "discover_suites",
    "load_suite",
    "resolve_cases",
    "resolved_case_keys",
    "run_cases",
    "slugify",
    "suite_json_schema",
    "targets_json_schema",
    "with_run_options",
]
