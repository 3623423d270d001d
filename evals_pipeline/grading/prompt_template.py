"""Executable prompt templates: `prompt: {command: [...]}` on an llm-grader (AgentV 4.42.4).

The program reads the code-grader payload on stdin (AgentV's prompt-template fields, `criteria`
to `config`, always inline, plus our paths), runs from its script's folder, and prints the
grader's prompt: stdout, trimmed. A program that fails or prints nothing is the grader's error, with its stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.grading.code_grader.payload import stdin_payload
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.grader_process import run_grader
from evals_pipeline.models.assertions import LlmGraderBase, PromptCommand
from evals_pipeline.process import stderr_reason

PROMPT_TEMPLATE_TIMEOUT_SECONDS = 60.0
"""As long as a code grader gets by default: a template only formats text."""
STDERR_TAIL_CHARS = 4_000


class PromptTemplateError(EvalsPipelineError):
    """The template program failed; `stderr` is the end of what it wrote there."""

    def __init__(self, reason: str, stderr: str = "") -> None:
        super().__init__(f"Prompt template execution failed: {reason}")
        self.stderr = stderr


def render_prompt_template(spec: LlmGraderBase, command: PromptCommand, ctx: GradingContext) -> str:
    """Run the template program on this session and return the prompt it printed."""
    script = Path(command.script)
    if not (script.is_absolute() and script.is_file()):  # resolve made a found one absolute
        raise PromptTemplateError(
            f"prompt command file not found: {command.script} (the command's last item must be "
            "the script, relative to the eval file's folder)"
        )
    # AgentV: the prompt's own config, else the grader's (its extra keys and `config:`).
    config = command.config if command.config is not None else spec.config or None
    payload = stdin_payload(ctx, config)
    # AgentV inlines these for a template however long (its SDK's definePromptTemplate reads no
    # file-backed field); the paths stay beside them.
    trace = ctx.agentv_trace
    payload |= {
        "output": ctx.output,
        "answer": ctx.output,
        "messages": trace.wire_messages,
        "trace": trace.wire_trace,
    }
    result = run_grader(
        command.command,
        cwd=script.parent,
        timeout_seconds=PROMPT_TEMPLATE_TIMEOUT_SECONDS,
        stdin=json.dumps(payload, indent=2, ensure_ascii=False).encode("utf-8"),
        suite_dir=ctx.case.base_dir,
    )
    stderr = result.stderr[-STDERR_TAIL_CHARS:]
    if result.error is not None:
        raise PromptTemplateError(result.error, stderr)
    if result.timed_out:
        raise PromptTemplateError(f"timed out after {PROMPT_TEMPLATE_TIMEOUT_SECONDS:g} s", stderr)
    if result.exit_code != 0:
        said = stderr_reason(stderr)
        how = f"exited with code {result.exit_code}"
        raise PromptTemplateError(f"{how}: {said}" if said else how, stderr)
    prompt = result.stdout.decode("utf-8", "replace").strip()
    if not prompt:
        raise PromptTemplateError("Prompt template produced empty output", stderr)
    return prompt
