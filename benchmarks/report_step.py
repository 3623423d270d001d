"""The report step of `evals-pipeline run` on its own: the suite of EVALS_PIPELINE_SUITES loaded
and its run definitions built (the load), then its `report` job run in this process on the
instance of DAGSTER_HOME, over the latest records of every partition. Prints the two times and
the report's folder as one JSON line.

The load is what a run has done before its report step, as `evals-pipeline run` does it: the
records' Parquet IO (pyarrow) imported by the steps before (a run worker forked by the daemon
has it preloaded, instance/warm_workers.py), the instance open, and the start-up frozen out of the
collector's sight once the definitions are built (gc_pause.start_up_over)."""

from __future__ import annotations

import json
import os
import sys
import time

from evals_pipeline.gc_pause import start_up_over, start_up_paused


def main() -> int:
    with start_up_paused():
        return _timed()


def _timed() -> int:
    start = time.perf_counter()
    import dagster as dg

    import evals_pipeline.storage.parquet  # noqa: F401  (see above)
    from evals_pipeline.defs.history import TRIGGER_TAG
    from evals_pipeline.defs.suite_run import run_definitions
    from evals_pipeline.storage_env import storage_root_from_env
    from evals_pipeline.suites import load_suite

    suite = load_suite(os.environ["EVALS_PIPELINE_SUITES"])
    job = run_definitions(suite, storage_root_from_env()).resolve_job_def("report")
    with dg.DagsterInstance.get() as instance:
        start_up_over()
        loaded = time.perf_counter()
        result = job.execute_in_process(
            instance=instance, run_config={"loggers": {"progress": {}}}, tags={TRIGGER_TAG: "cli"}
        )
    reported = time.perf_counter()
    [event] = result.get_asset_materialization_events()
    metadata = event.materialization.metadata
    figures = {
        "load_seconds": loaded - start,
        "report_seconds": reported - loaded,
        "cases": sum(
            int(str(v.value))
            for k, v in metadata.items()
            if k.endswith(("/passed", "/failed", "/errors"))
        ),
        "uri": str(metadata["dagster/uri"].value),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
