"""Keeping every process a run starts inside the run: markers on each child, a subreaper and
parent-death signal for the runner, a kill that finds escaped descendants, and a sweep of the
leftovers of runners that died (see docs/agents.md, "Processes")."""
