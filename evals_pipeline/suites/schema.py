"""JSON Schemas of the suite and targets files, for editor completion and validation."""

from __future__ import annotations

from typing import Any

import evals_pipeline.agents.registry  # noqa: F401  (registers the target models the schemas list)
from evals_pipeline.models.suite import EvalSuite
from evals_pipeline.models.targets import TargetsFile

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def suite_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of an eval file in its canonical form."""
    return _with_header(EvalSuite.model_json_schema(by_alias=True), "evals-pipeline eval suite")


def targets_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of `.agentv/targets.yaml`."""
    return _with_header(TargetsFile.model_json_schema(by_alias=True), "evals-pipeline targets file")


def _with_header(schema: dict[str, Any], title: str) -> dict[str, Any]:
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "title": title}
