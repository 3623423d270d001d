"""What AgentV 4.x accepts that evals-pipeline does not (yet), so errors can say so plainly.

An AgentV suite that uses one of these gets a specific message instead of "unknown key", since
the key is not a typo: it is a feature that is missing here.
"""

from __future__ import annotations

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

AGENTV_PROVIDERS: frozenset[str] = frozenset(
    {
        "openrouter",
        "azure",
        "azure-openai",
        "gemini",
        "google",
        "google-gemini",
        "claude-sdk",
        "cc-mirror",
        "copilot",
        "copilot-cli",
        "copilot-sdk",
        "copilot-log",
        "vscode",
        "vscode-insiders",
        "agentv",
    }
)
"""AgentV providers evals-pipeline has no adapter for: run those agents through a `cli` target."""

UNSUPPORTED_KEYS: dict[str, frozenset[str]] = {
    "TestSpec": frozenset({"mode", "turns", "aggregation", "on_turn_failure", "window_size"}),
    "TargetRef": frozenset({"hooks"}),
    "CliTarget": frozenset(
        {
            "grader_target",
            "judge_target",
            "fallback_targets",
            "use_target",
            "subagent_mode_allowed",
            "max_retries",
        }
    ),
    "MockTarget": frozenset({"grader_target", "judge_target", "use_target", "fallback_targets"}),
    "ReplayTarget": frozenset({"fixtures", "source_target", "eval_path", "variant"}),
    "CodeGraderAssertion": frozenset(),
    "LlmGraderAssertion": frozenset({"max_steps"}),
    "RubricsAssertion": frozenset({"max_steps"}),
    "RubricItem": frozenset({"operator", "score_ranges"}),
    "ClaudeCodeTarget": frozenset(
        {"cwd", "system_prompt", "max_budget_usd", "bypass_permissions", "log_dir", "log_format"}
    ),
    "CodexTarget": frozenset({"cwd", "system_prompt", "log_dir", "log_format", "stream_log"}),
    "PiAgentTarget": frozenset({"cwd", "system_prompt", "subprovider", "thinking", "tools"}),
}
"""AgentV keys, by the model they would sit in, that evals-pipeline does not implement."""

RENAMED_KEYS: dict[str, str] = {
    "attachments_format": "files_format",
    "keep_output_files": "keep_temp_files",
    "command_template": "command",
    "input_messages": "input",
    "expected_messages": "expected_output",
    "binary": "executable",
    "model_reasoning_effort": "reasoning_effort",
}
"""Older AgentV key names, suggested as the fix when the new name is valid at that place."""

NOT_ACCEPTED: dict[str, str] = {
    "tests[].mode": "live multi-turn conversations (mode, turns, aggregation, on_turn_failure, "
    "window_size) are not implemented yet",
    "tests[].turns": "live multi-turn conversations are not implemented yet",
    "tests[].aggregation": "live multi-turn conversations are not implemented yet",
    "tests[].on_turn_failure": "live multi-turn conversations are not implemented yet",
    "tests[].window_size": "live multi-turn conversations are not implemented yet",
    "execution.targets[].hooks": "per-target hooks are not implemented: use workspace.hooks",
}
"""Paths of AgentV 4.42.4's eval-file schema (`tests[]` also stands for `eval_cases[]`, and
`execution` also for `tests[].execution`) that evals-pipeline rejects, with the reason. Every
other path of the schema loads: evals_pipeline_tests/suites/test_agentv_schema.py checks both,
and that docs/suite-format.md lists each of these."""
