"""An example Dagster project with an eval suite added as an EvalSuiteComponent."""
