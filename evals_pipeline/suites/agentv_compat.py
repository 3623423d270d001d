"""AgentV names evals-pipeline reads differently, skips or has no adapter for, so errors and
warnings can say so plainly instead of "unknown key" (the name is not a typo)."""

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

AGENTV_PROVIDERS: frozenset[str] = frozenset(UNSUPPORTED_PROVIDERS)
"""AgentV providers evals-pipeline has no adapter for: run those agents through a `cli` target."""

RENAMED_KEYS: dict[str, str] = {
    "attachments_format": "files_format",
    "keep_output_files": "keep_temp_files",
    "command_template": "command",
    "input_messages": "input",
    "expected_messages": "expected_output",
}
"""Older AgentV key names, suggested as the fix when the new name is valid at that place."""
