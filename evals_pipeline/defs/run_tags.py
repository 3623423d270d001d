"""Where dagster.yaml files written before the move to instance/ look for the run queue
(`module: evals_pipeline.defs.run_tags`, class EvalRunCoordinator): the tags themselves are
evals_pipeline/instance/run_tags.py."""

from evals_pipeline.instance.run_coordinator import EvalRunCoordinator

__all__ = ["EvalRunCoordinator"]
