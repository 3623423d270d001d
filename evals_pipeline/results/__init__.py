"""The per-case result store, durable the moment a case is done, and the cache keys that let
unchanged cases reuse it (docs/durability.md)."""

from evals_pipeline.results.keys import (
    CaseKeys,
    Identity,
    agent_identity,
    case_keys,
    votes_key,
)
from evals_pipeline.results.store import ResultStore, StoredResult

__all__ = [
    "CaseKeys",
    "Identity",
    "ResultStore",
    "StoredResult",
    "agent_identity",
    "case_keys",
    "votes_key",
]
