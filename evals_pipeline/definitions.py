"""The code location `dagster dev -w workspace.yaml` and `dagster asset materialize -m` load."""

from evals_pipeline.defs.definitions import definitions_from_env

defs = definitions_from_env()
