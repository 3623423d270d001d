from __future__ import annotations

import json

from evals_pipeline.suites import suite_json_schema, targets_json_schema


def test_suite_schema_is_draft_2020_12_with_the_suite_keys() -> None:
    schema = suite_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "evals-pipeline eval suite"
    assert {"$schema", "tests", "execution", "assertions", "targets", "workspace"} <= set(
        schema["properties"]
    )
    assert schema["required"] == ["tests"]
    assert schema["additionalProperties"] is False
    json.dumps(schema)  # serialisable as is, for editors


def test_suite_schema_describes_assertion_types() -> None:
    text = json.dumps(suite_json_schema())
    for kind in ("contains", "code-grader", "tool-trajectory"):
        assert f'"{kind}"' in text


def test_targets_schema() -> None:
    schema = targets_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["required"] == ["targets"]
    text = json.dumps(schema)
    for provider in ("cli", "mock", "replay"):
        assert f'"{provider}"' in text
