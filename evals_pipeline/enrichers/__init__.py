"""Enrichers turn each agent's raw output into one canonical session."""

from evals_pipeline.enrichers.session import enrich_run, run_cost, trace_summary

__all__ = ["enrich_run", "run_cost", "trace_summary"]
