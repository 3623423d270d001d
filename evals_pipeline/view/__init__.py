"""`evals-pipeline view`: a small web server over the storage root (a local folder or an object
store) that lists the runs, serves each report as its build wrote it, and compares two runs of a
suite (docs/report.md, "Viewing reports"). Pure: no Dagster."""
