"""Dagster's own start-up, the floor under `evals-pipeline run`'s: import dagster, open the
instance of DAGSTER_HOME, and run a job of two assets in this process, as the CLI runs a suite.
The first asset notes when its body starts in the file given (epoch seconds), as the fake agents
do; nothing of evals-pipeline is imported.

    python -m benchmarks.dagster_floor STARTED_FILE
"""

from __future__ import annotations

import sys
import time


def main(started_file: str) -> int:
    import dagster as dg

    @dg.asset
    def first() -> int:
        with open(started_file, "a", encoding="utf-8") as stamps:
            stamps.write(f"{time.time()}\n")
        return 1

    @dg.asset
    def second(first: int) -> int:
        return first + 1

    job = dg.Definitions(assets=[first, second]).resolve_implicit_global_asset_job_def()
    with dg.DagsterInstance.get() as instance:
        return 0 if job.execute_in_process(instance=instance).success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
