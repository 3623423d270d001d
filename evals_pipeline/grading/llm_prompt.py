"""The prompts of AgentV's LLM graders, word for word (AgentV 4.42.4): the freeform template,
the checklist and score-range prompts, their system prompts and the `{{variables}}` they fill."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.preprocessing import preprocessed_answer
from evals_pipeline.grading.prompt_template import render_prompt_template
from evals_pipeline.llm import LlmRequest
from evals_pipeline.models.assertions import LlmGraderBase, RubricItem
from evals_pipeline.models.messages import Message, ToolCall, content_text

Mode = Literal["freeform", "rubric", "score_range"]


VARIABLES: tuple[str, ...] = (
    "input",
    "output",
    "expected_output",
    "criteria",
    "metadata",
    "metadata_json",
    "rubrics",
    "rubrics_json",
    "file_changes",
    "tool_calls",
)
"""AgentV's prompt variables, written `{{name}}` (spaces inside the braces allowed)."""


_VARIABLE = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")


SECTION_LIMIT_CHARS = 50_000
"""file_changes and tool_calls beyond this are cut (marked) so one diff cannot fill the context."""


DEFAULT_TEMPLATE = """You are an expert grader. Your goal is to grade the answer based on how well \
it achieves the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The \
reference_answer may be a simple text response, or it may contain a sequence of expected agent \
messages including tool calls. When it contains multiple messages, the last message represents \
the final expected answer. The answer does not need to match it verbatim, but should capture the \
key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than \
verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{input}}

[[ ## reference_answer ## ]]
{{expected_output}}

[[ ## answer ## ]]
{{output}}"""
"""AgentV 4.42.4's default llm-grader template (freeform mode), word for word."""


FREEFORM_SCHEMA = """You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "assertions": [
    {
      "text": "<brief description of what was checked>",
      "passed": <boolean>,
      "evidence": "<concise evidence, 1-2 sentences, optional>"
    }
  ],
  "details": {<optional object with domain-specific structured metrics>}
}"""


RUBRIC_SYSTEM = """You are an expert grader. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""
"""AgentV 4.42.4's system prompt in rubric mode (buildRubricOutputSchema), default or custom."""


SCORE_RANGE_SYSTEM = """You are an expert grader. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined \
score ranges for that criterion."""
"""AgentV's system prompt in score-range mode (buildScoreRangeOutputSchema)."""


OPERATOR_GUIDANCE: dict[str, str] = {
    "correctness": "Correctness: mark satisfied only when the answer positively supports or "
    "fulfills the outcome. Omission or contradiction should not satisfy it.",
    "contradiction": "Contradiction guard: mark satisfied when the answer does not make a claim "
    "that contradicts the outcome. Do not require the answer to mention the outcome; mark "
    "unsatisfied only for incompatible claims.",
}
"""AgentV's words for each rubric `operator` (rubric-operators.ts), once per operator used."""


def build_request(spec: LlmGraderBase, ctx: GradingContext) -> tuple[LlmRequest, Mode]:
    """The system prompt and question for this grader on this session, and its mode."""
    rubrics = spec.rubric_items
    mode: Mode = "freeform"
    if rubrics:
        mode = "score_range" if any(item.score_ranges for item in rubrics) else "rubric"
    custom = read_prompt(spec, ctx)
    variables = prompt_variables(ctx, rubrics)
    answer = preprocessed_answer(ctx, spec.preprocessors)
    if answer is not None:
        variables["output"] = answer.strip()  # file blocks as text, as AgentV's grader reads them
    # AgentV: what a program printed is the whole template, variables or not.
    if custom is not None and (spec.prompt_command is not None or has_variables(custom)):
        user = substitute(custom, variables)
        system = {
            "freeform": FREEFORM_SCHEMA,
            "rubric": RUBRIC_SYSTEM,
            "score_range": SCORE_RANGE_SYSTEM,
        }[mode]
    else:
        if custom is not None and custom.strip():
            variables["criteria"] = custom.strip()  # a prompt without variables is the criteria
        if mode == "score_range":
            user, system = _score_range_prompt(variables, rubrics), SCORE_RANGE_SYSTEM
        elif rubrics:
            user, system = _rubric_prompt(variables, rubrics), RUBRIC_SYSTEM
        else:
            user, system = _freeform_prompt(variables), FREEFORM_SCHEMA
    request = LlmRequest.ask(user, system=system)
    if spec.temperature is not None:
        request = request.model_copy(update={"temperature": spec.temperature})
    return request, mode


def read_prompt(spec: LlmGraderBase, ctx: GradingContext) -> str | None:
    """The prompt text: inline, the file a `file://` prompt names (absolute once resolved), or
    what an executable prompt template prints for this session."""
    command = spec.prompt_command
    if command is not None:
        return render_prompt_template(spec, command, ctx)
    path = spec.prompt_file
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    return spec.prompt if isinstance(spec.prompt, str) else None


def has_variables(template: str) -> bool:
    """Whether a prompt uses any of AgentV's variables (then it replaces the default template)."""
    return any(match.group(1) in VARIABLES for match in _VARIABLE.finditer(template))


def substitute(template: str, variables: dict[str, str]) -> str:
    """Replace `{{name}}` with its value; unknown names stay as written (AgentV's rule)."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), template)


def prompt_variables(ctx: GradingContext, rubrics: list[RubricItem]) -> dict[str, str]:
    """Every variable's value for this session, as AgentV fills them."""
    case, session = ctx.case, ctx.session
    rubric_dicts = [agentv_rubric(r) for r in rubrics]
    return {
        "input": render_messages(case.input).strip(),
        "output": ctx.output.strip(),
        "expected_output": render_expected(case.expected_output).strip(),
        "criteria": case.criteria.strip(),
        "metadata": json.dumps(case.metadata, indent=2, ensure_ascii=False)
        if case.metadata is not None
        else "",
        "metadata_json": compact_json(case.metadata) if case.metadata is not None else "",
        "rubrics": json.dumps(rubric_dicts, indent=2, ensure_ascii=False) if rubrics else "",
        "rubrics_json": compact_json(rubric_dicts) if rubrics else "",
        "file_changes": _cut(session.file_changes or ""),
        "tool_calls": _cut(format_tool_calls(ctx.tool_calls)) if _has_tool_calls(ctx) else "",
    }


def compact_json(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it: no spaces after `,` and `:`."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def agentv_rubric(item: RubricItem) -> dict[str, Any]:
    """A criterion as AgentV 4.42.4's parser leaves it (the `{{rubrics}}` variable): its keys in
    AgentV's order, whole numbers as integers, `required_min_score` (min_score * 10, rounded)
    beside a min_score, and `required` on a banded criterion only when written."""
    gate = {}
    if item.min_score is not None:
        gate = {"min_score": _js(item.min_score), "required_min_score": _round(item.min_score * 10)}
    if item.score_ranges is None:
        return {
            "id": item.id,
            "outcome": item.outcome,
            **({"operator": item.operator} if item.operator else {}),
            "weight": _js(item.weight),
            "required": item.must_pass,
            **gate,
        }
    banded: dict[str, Any] = {"id": item.id, "weight": _js(item.weight)}
    if item.outcome:
        banded["outcome"] = item.outcome
    if item.operator:
        banded["operator"] = item.operator
    if item.required is not None:
        banded["required"] = item.required
    banded |= gate
    banded["score_ranges"] = [
        {"score_range": list(band.score_range), "outcome": band.outcome}
        for band in item.score_ranges
    ]
    return banded


def _js(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _round(value: float) -> int:
    # JavaScript's Math.round: halves go up (Python's round goes to even).
    return math.floor(value + 0.5)


def _has_tool_calls(ctx: GradingContext) -> bool:
    # Reading the transcript is the one costly step; sessions without tools skip it.
    return bool(ctx.session.trace_summary.tool_calls) or ctx.session.output is None


def _freeform_prompt(variables: dict[str, str]) -> str:
    user = substitute(DEFAULT_TEMPLATE, variables)
    if variables["file_changes"]:
        user += f"\n\n[[ ## file_changes ## ]]\n{variables['file_changes']}"
    if variables["tool_calls"]:
        user += f"\n\n[[ ## tool_calls ## ]]\n{variables['tool_calls']}"
    return user


def _task_sections(variables: dict[str, str]) -> list[str]:
    """The question, criteria, reference, answer, file changes and tool calls, as AgentV's
    rubric and score-range prompts both lay them out (each section and a blank line)."""
    parts = [
        "[[ ## question ## ]]",
        variables["input"],
        "",
        "[[ ## criteria ## ]]",
        variables["criteria"],
        "",
    ]
    if variables["expected_output"]:
        parts += ["[[ ## reference_answer ## ]]", variables["expected_output"], ""]
    parts += ["[[ ## answer ## ]]", variables["output"], ""]
    if variables["file_changes"]:
        parts += ["[[ ## file_changes ## ]]", variables["file_changes"], ""]
    if variables["tool_calls"]:
        parts += ["[[ ## tool_calls ## ]]", variables["tool_calls"], ""]
    return parts


def _rubric_prompt(variables: dict[str, str], rubrics: list[RubricItem]) -> str:
    """AgentV 4.42.4's buildRubricPrompt: the task, the answer, then one line per criterion."""
    parts = [
        "You are an expert grader. Evaluate the candidate answer against each rubric item below.",
        "",
        *_task_sections(variables),
    ]
    parts.append("[[ ## rubrics ## ]]")
    guidance = operator_guidance(rubrics)
    if guidance:
        parts += ["", "Operator guidance:", *(f"- {line}" for line in guidance), ""]
    for item in rubrics:
        required = " (REQUIRED)" if item.must_pass else ""
        weight = f" (weight: {js_number(item.weight)})" if item.weight != 1.0 else ""
        operator = f" (operator: {item.operator})" if item.operator else ""
        parts.append(f"- [{item.id}]{required}{weight}{operator}: {item.outcome}")
    parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
    return "\n".join(parts)


def _score_range_prompt(variables: dict[str, str], rubrics: list[RubricItem]) -> str:
    """AgentV's buildScoreRangePrompt: the task, the answer, then each criterion's bands."""
    parts = [
        "You are an expert grader. Score the candidate answer on each criterion below using "
        "the provided score ranges.",
        "For each criterion, output an integer score from 0 to 10 based on which score range "
        "best matches the answer.",
        "",
        *_task_sections(variables),
    ]
    parts.append("[[ ## scoring_criteria ## ]]")
    for item in rubrics:
        weight = f" (weight: {js_number(item.weight)})" if item.weight != 1.0 else ""
        gate = (
            f" [REQUIRED: min score {js_number(item.min_score)}]"
            if item.min_score is not None
            else ""
        )
        parts += ["", f"### Criterion: {item.id}{weight}{gate}"]
        if item.operator:
            parts.append(f"Operator: {item.operator}")
        if item.outcome:
            parts.append(f"Description: {item.outcome}")
        if item.score_ranges:
            parts.append("Score ranges:")
            for band in item.score_ranges:
                low, high = band.score_range
                label = f"{low}" if low == high else f"{low}-{high}"
                parts.append(f"  - Score {label}: {band.outcome}")
    guidance = operator_guidance(rubrics)
    if guidance:
        parts += ["", *guidance]
    parts += [
        "",
        "For each criterion, provide an integer score 0-10 that matches one of its defined "
        "score ranges.",
    ]
    return "\n".join(parts)


def operator_guidance(rubrics: list[RubricItem]) -> list[str]:
    """AgentV's guidance for each operator the criteria use, in order of first use."""
    used = dict.fromkeys(item.operator for item in rubrics if item.operator)
    return [OPERATOR_GUIDANCE[operator] for operator in used]


def js_number(value: float) -> str:
    """A number as JavaScript prints it in a template string (3, 1.5, 0.7)."""
    return str(_js(value))


def render_messages(messages: list[Message]) -> str:
    """Messages as an LLM reads them: file contents inlined as `<file path="…">` blocks.

    One message is its parts joined by blank lines; a conversation gets `@[Role]:` markers.
    """
    rendered = [(m, _message_text(m)) for m in messages]
    rendered = [(m, text) for m, text in rendered if text]
    conversation = len(rendered) > 1 or any(m.role in ("assistant", "tool") for m, _ in rendered)
    if not conversation:
        return rendered[0][1] if rendered else ""
    return "\n\n".join(f"@[{m.role.capitalize()}]:\n{text}" for m, text in rendered)


def render_expected(messages: list[Message]) -> str:
    """The reference answer: the text of a single expected message, else the conversation."""
    if len(messages) == 1 and not messages[0].tool_calls:
        return _message_text(messages[0])
    return render_messages(messages)


def _message_text(message: Message) -> str:
    parts: list[str] = []
    content = message.content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "file":
                path = block.get("path") or block.get("value")
                parts.append(f'<file path="{path}">\n{block.get("text") or ""}\n</file>')
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append(f'<image path="{block.get("path") or block.get("value")}">')
            else:
                parts.append(content_text([block]))
    elif isinstance(content, dict):
        parts.append(json.dumps(content, indent=2, ensure_ascii=False))
    else:
        parts.append(content_text(content))
    if message.tool_calls:
        parts.append(format_tool_calls(message.tool_calls))
    return "\n\n".join(p for p in parts if p.strip())


def format_tool_calls(calls: list[ToolCall]) -> str:
    """One line per call: tool, input as JSON, status and the start of its output."""
    lines = []
    for call in calls:
        line = f"- {call.tool} {json.dumps(call.input, ensure_ascii=False, default=str)}"
        if call.status:
            line += f" [{call.status}]"
        if call.output not in (None, ""):
            output = (
                call.output
                if isinstance(call.output, str)
                else json.dumps(call.output, ensure_ascii=False, default=str)
            )
            line += f" → {_cut(output, 500)}"
        lines.append(line)
    return "\n".join(lines)


def _cut(text: str, limit: int = SECTION_LIMIT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters cut]"
