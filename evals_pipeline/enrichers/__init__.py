"""Enrichers turn each agent's raw output into one canonical session."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.enrichers.session import enrich_run, run_cost, trace_summary

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "enrich_run": "session",
    "run_cost": "session",
    "trace_summary": "session",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "enrich_run",
    "run_cost",
    "trace_summary",
]
