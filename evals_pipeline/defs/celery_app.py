"""The celery app a worker runs (`celery -A evals_pipeline.defs.celery_app worker`):
dagster-celery's step task, on the broker EVALS_PIPELINE_CELERY_BROKER names."""

from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from evals_pipeline.defs.executor import celery_app_args

app = make_app(celery_app_args())

execute_plan = create_task(app)
