"""Where dagster.yaml files written before the move to instance/ look for the run launcher
(`module: evals_pipeline.defs.run_launcher`): evals_pipeline/instance/run_launcher.py."""

from evals_pipeline.instance.run_launcher import WarmRunLauncher

__all__ = ["WarmRunLauncher"]
