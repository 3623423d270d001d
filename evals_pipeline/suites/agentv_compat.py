"""What AgentV 4.x accepts that evals-pipeline does not (yet), so errors can say so plainly.

An AgentV suite that uses one of these gets a specific message instead of "unknown key", since
the key is not a typo: it is a feature that is missing here.
"""

from __future__ import annotations

from evals_pipeline.models.targets import UNSUPPORTED_PROVIDERS

LLM_ASSERTION_TYPES: frozenset[str] = frozenset({"llm-rubric", "agent-rubric", "agent-judge"})
"""LLM grader types evals-pipeline does not implement (AgentV 5.x's promptfoo-style rubric and its
agent graders); llm-grader and rubrics cover the same ground."""

RENAMED_ASSERTION_TYPES: dict[str, str] = {"script": "code-grader"}
"""Type names that are not types (a `script` key became `command` on `code-grader`); `rubric`
and `inline-assert` are rewritten in suites/aliases.py."""

SKIPPED_JUDGE_TYPES: dict[str, str] = {
    "code-judge": "code-grader",
    "llm-judge": "llm-grader",
}
"""Types AgentV 4.42.4 skips with a warning (`code_judge` too, after `_` becomes `-`): the
assertion never grades there, so here it is dropped with a warning naming the new type."""

UNSUPPORTED_ASSERTION_TYPES: frozenset[str] = frozenset()

AGENTV_PROVIDERS: frozenset[str] = frozenset(UNSUPPORTED_PROVIDERS)
"""AgentV providers evals-pipeline has no adapter for: run those agents through a `cli` target."""

UNSUPPORTED_KEYS: dict[str, frozenset[str]] = {
    "ReplayTarget": frozenset(),
    "CodeGraderAssertion": frozenset(),
    "LlmGraderAssertion": frozenset(),
    "RubricsAssertion": frozenset(),
    "RubricItem": frozenset(),
}
"""AgentV keys, by the model they would sit in, that evals-pipeline does not implement."""

RENAMED_KEYS: dict[str, str] = {
    "attachments_format": "files_format",
    "keep_output_files": "keep_temp_files",
    "command_template": "command",
    "input_messages": "input",
    "expected_messages": "expected_output",
}
"""Older AgentV key names, suggested as the fix when the new name is valid at that place."""

NOT_ACCEPTED: dict[str, str] = {}
"""Paths of AgentV 4.42.4's eval-file schema (`tests[]` also stands for `eval_cases[]`, and
`execution` also for `tests[].execution`) that evals-pipeline rejects, with the reason. Every
other path of the schema loads: evals_pipeline_tests/suites/test_agentv_schema.py checks both,
and that docs/suite-format.md lists each of these."""
