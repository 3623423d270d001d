"""What a Dagster instance's dagster.yaml loads: the batching event log, the tagging run queue,
the warm run launcher, the daemon's backfill cadence, plus the local instance's set-up and the
recovery of runs whose process died. The code location is defs/."""
