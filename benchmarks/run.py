"""`make bench`: each workload measured on this machine, one after the other; prints wall time,
process-tree peak memory and the ratio to each workload's reference (the floor, its target or
the CLI), and appends the figures with the commit to a JSONL file.

    python -m benchmarks.run [W0 W1 W2 ...] [--results FILE] [--keep]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from benchmarks import REPO, daemon, registration, reporting
from benchmarks.outcome import Outcome
from benchmarks.suite_runs import versus_floor
from benchmarks.workloads import WORKLOADS

DEFAULT_RESULTS = REPO / ".evals" / "bench" / "results.jsonl"


@dataclass(frozen=True)
class Bench:
    name: str
    description: str
    measure: Callable[[Path], Outcome]  # given a scratch folder of its own
    default: bool = True  # in the set `make bench` runs without W=


BENCHES = {
    b.name: b
    for b in [
        *(
            Bench(w.name, w.description, partial(versus_floor, w), w.default)
            for w in WORKLOADS.values()
        ),
        Bench(
            "W4",
            "registering a 10,000-case suite: validate, register, the sensor's first tick",
            partial(registration.registration, registration.SUITE),
        ),
        Bench(
            "W5",
            "the report and compare on 10,000 case results",
            partial(reporting.reporting, reporting.SUITE),
        ),
        Bench(
            "W7",
            "the HTML report of 1,000 cases x 3 agents x 10 MB sessions",
            partial(reporting.html_report, reporting.HTML_SUITE),
            default=False,  # its set-up copies 3,000 sessions' records: run it by name
        ),
        Bench(
            "W6",
            "a 10-case backfill launched through the Dagster daemon vs the CLI",
            partial(daemon.through_daemon, daemon.SUITE),
        ),
        Bench(
            "W6-scattered",
            "a backfill of 3 cases of 10, none neighbours, vs the CLI on those 3",
            partial(daemon.through_daemon, daemon.SUITE, scattered=True),
        ),
    ]
}


def commit() -> str:
    found = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True, text=True
    )
    return found.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", metavar="W")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep each workload's folder (suites, Dagster home, storage) to profile or look at",
    )
    args = parser.parse_args()
    unknown = [w for w in args.workloads if w not in BENCHES]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    names = args.workloads or [b.name for b in BENCHES.values() if b.default]
    # Our modules' bytecode cached, as users have it after their first command: where
    # PYTHONDONTWRITEBYTECODE is set, every measured process would compile ~280 modules again.
    compileall.compile_dir(REPO / "evals_pipeline", quiet=1)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        bench = BENCHES[name]
        print(f"{name:<4} {bench.description}", flush=True)
        if args.keep:
            folder = Path(tempfile.mkdtemp(prefix=f"evals-bench-{name}-"))
            print(f"     kept in {folder}", flush=True)
            outcome = bench.measure(folder)
        else:
            with tempfile.TemporaryDirectory(prefix=f"evals-bench-{name}-") as tmp:
                outcome = bench.measure(Path(tmp))
        print(f"     {outcome.line()}", flush=True)
        row = {
            "workload": name,
            "description": bench.description,
            "commit": commit(),
            "measured_ms": int(time.time() * 1000),
            "cpus": os.cpu_count(),
            **outcome.row(),
        }
        with args.results.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
    print(f"results appended to {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
