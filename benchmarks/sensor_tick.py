"""One tick of a suite's cases sensor as the daemon's code server runs it: the code location
`dagster dev -w workspace.yaml` loads (its suites from EVALS_PIPELINE_SUITES), then the sensor
evaluated on the instance of DAGSTER_HOME with no cursor yet, as its first tick. Prints the
load time, the tick time and the tick's outcome as one JSON line."""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    start = time.perf_counter()
    import dagster as dg

    from evals_pipeline.definitions import defs

    loaded = time.perf_counter()
    sensors = defs.get_repository_def().sensor_defs
    [sensor] = [s for s in sensors if s.name.endswith("_cases")]  # the one suite's
    cases = f"{sensor.name.removesuffix('_cases')}__cases"
    with dg.DagsterInstance.get() as instance:
        before = len(instance.get_dynamic_partitions(cases))
        tick_start = time.perf_counter()
        data = sensor.evaluate_tick(dg.build_sensor_context(instance=instance))
        ticked = time.perf_counter()
        added = len(instance.get_dynamic_partitions(cases)) - before  # the sensor registers them
    figures = {
        "load_seconds": loaded - start,
        "tick_seconds": ticked - tick_start,
        "cases_in_cursor": len(json.loads(data.cursor or "{}")),
        "partitions_added": added,
        "run_requests": len(data.run_requests or []),
        "skip_message": data.skip_message,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # The code server that ticks a sensor lives on; this stand-in's teardown (freeing the
    # definitions of 10,000 cases, ~1.5 s) is no part of what a user waits for.
    os._exit(code)
