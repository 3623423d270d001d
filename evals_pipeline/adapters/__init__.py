"""Adapters run an agent on a resolved case; which adapter runs which provider is the agent
registry's (evals_pipeline/agents/)."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.adapters.base import Adapter, RunContext
    from evals_pipeline.adapters.runner import ADAPTERS, run_agent

# Each name loads its module when first used: the adapters' own modules import their siblings,
# which would loop back through an `__init__` that imported them all.
_MODULES = {
    "ADAPTERS": "runner",
    "Adapter": "base",
    "RunContext": "base",
    "run_agent": "runner",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = ["ADAPTERS", "Adapter", "RunContext", "run_agent"]
