"""Top-level keys AgentV ignores: dropped with a warning instead of failing the load.

AgentV's validator warns "Unknown field 'X'. This field will be ignored." for a top-level key it
does not know (validation/eval-validator.ts), e.g. a `defaults:` block that only holds YAML
anchors. A near miss of a known key (`descripton`) stays the unknown-key error with its "did you
mean", since it is almost surely a typo.
"""

from __future__ import annotations

import difflib

from evals_pipeline.models.suite import EvalSuite
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.yaml_positions import YamlDocument

AGENTV_TOP_LEVEL_KEYS = frozenset(
    {
        "$schema", "name", "description", "category", "version", "author", "tags", "license",
        "requires", "input", "input_files", "tests", "target", "execution", "assertions",
        "evaluators", "preprocessors", "workspace", "metadata", "governance",
        "eval_cases", "evalcases", "evaluator",
    }
)  # fmt: skip
"""AgentV 4.42.4's known and deprecated top-level fields (eval-validator.ts)."""


def drop_ignored_top_level_keys(doc: YamlDocument) -> list[SuiteIssue]:
    """Remove the top-level keys AgentV ignores from `doc.data`; one warning for each."""
    if not isinstance(doc.data, dict):
        return []
    ours = {
        name
        for field_name, field in EvalSuite.model_fields.items()
        for name in (field_name, field.alias)
        if name
    }
    known = sorted(ours | AGENTV_TOP_LEVEL_KEYS)
    warnings: list[SuiteIssue] = []
    for key in list(doc.data):
        if not isinstance(key, str) or key in known:
            continue
        if difflib.get_close_matches(key, known, n=1, cutoff=0.8):
            continue  # a typo: the validation error says "did you mean"
        mark = doc.positions.key((key,))
        warnings.append(
            SuiteIssue(
                mark.file or doc.file,
                mark.line,
                mark.column,
                f"unknown top-level key '{key}' is ignored, as AgentV ignores it",
                "remove it, or keep it if it only holds YAML anchors",
            )
        )
        del doc.data[key]
    return warnings
