"""The code location `dagster dev -w workspace.yaml` and `dagster asset materialize -m` load."""

from evals_pipeline.gc_pause import built_for_life

with built_for_life():  # our modules and the suites' definitions live as long as the code server
    from evals_pipeline.defs.definitions import definitions_from_env
    from evals_pipeline.instance.event_volume import lean_event_log

    lean_event_log()
    defs = definitions_from_env()
