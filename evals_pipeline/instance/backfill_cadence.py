"""How often Dagster's backfill daemon looks at backfills.

Dagster 1.13 fixes that loop at 30 s (`DEFAULT_DAEMON_INTERVAL_SECONDS` in its daemon's
controller module, read when the daemon starts its loops, with no setting), so a
backfill launched from the UI waited up to 30 s before its first run and up to 30 s more after
its partitions' run before its report's. The instance's run queue (`EvalRunCoordinator`), which
the daemon process builds before it starts its loops, shortens it here from its
`backfill_interval_seconds` (docs/deployment.md). The same constant is only otherwise read as
the interval of sensor-less (legacy) auto-materialize, which this instance does not use."""

from __future__ import annotations

import logging

from evals_pipeline.dagster_private import daemon_controller as controller

INTERVAL_NAME = "DEFAULT_DAEMON_INTERVAL_SECONDS"

log = logging.getLogger(__name__)


def set_backfill_interval(seconds: float) -> None:
    """Make the backfill daemon of this process loop every `seconds`. Only a daemon process runs
    that loop; every process that loads the instance imports its module anyway."""
    if not isinstance(getattr(controller, INTERVAL_NAME, None), int | float):
        # A Dagster release that moved it: the daemon keeps its own cadence.
        log.warning(
            "%s.%s is gone: backfill_interval_seconds is ignored",
            controller.__name__,
            INTERVAL_NAME,
        )
        return
    setattr(controller, INTERVAL_NAME, seconds)
