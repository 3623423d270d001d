"""Where dagster.yaml files written before the move to instance/ look for the event log
(`module: evals_pipeline.defs.event_storage`): evals_pipeline/instance/event_storage.py."""

from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage

__all__ = ["BatchingSqliteEventLogStorage"]
