"""Text assertions on the final answer: contains / equals / starts-with / ends-with, their set and
case-insensitive forms, and regex in AgentV's JavaScript dialect."""

from __future__ import annotations

import json
import re

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation, preview
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import RegexAssertion, TextAssertion, TextSetAssertion

# JavaScript flags and their Python counterparts; g and y only steer repeated matching, u is
# Python's default for str patterns, d only adds match indices.
_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0, "y": 0, "d": 0}
_JS_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<(?![=!])")
_JS_BACKREFERENCE = re.compile(r"\\k<(\w+)>")


@evaluator(TextAssertion)
def evaluate_text(spec: TextAssertion, ctx: GradingContext) -> Evaluation:
    """contains / icontains (substring); equals / starts-with / ends-with (both sides trimmed)."""
    output, value = ctx.output, spec.value
    text = f"{spec.type} {json.dumps(value, ensure_ascii=False)}"
    if spec.type in ("contains", "icontains"):
        haystack, needle = (
            (output.lower(), value.lower()) if spec.type == "icontains" else (output, value)
        )
        index = haystack.find(needle)
        if index >= 0:
            return Evaluation.check(True, text, f"found at character {index}")
        return Evaluation.check(False, text, f"not found in output {preview(output)}")
    answer, expected = output.strip(), value.strip()
    if spec.type == "equals":
        passed = answer == expected
    elif spec.type == "starts-with":
        passed = answer.startswith(expected)
    else:
        passed = answer.endswith(expected)
    return Evaluation.check(passed, text, f"output {preview(answer)}")


@evaluator(TextSetAssertion)
def evaluate_text_set(spec: TextSetAssertion, ctx: GradingContext) -> Evaluation:
    """contains-any / -all and their case-insensitive forms."""
    insensitive = spec.type.startswith("i")
    haystack = ctx.output.lower() if insensitive else ctx.output
    found = [v for v in spec.value if (v.lower() if insensitive else v) in haystack]
    missing = [v for v in spec.value if v not in found]
    passed = bool(found) if spec.type.endswith("-any") else not missing
    text = f"{spec.type} {json.dumps(spec.value, ensure_ascii=False)}"
    evidence = f"found {found}, missing {missing}"
    if not passed:
        evidence += f" in output {preview(ctx.output)}"
    return Evaluation.check(passed, text, evidence)


@evaluator(RegexAssertion)
def evaluate_regex(spec: RegexAssertion, ctx: GradingContext) -> Evaluation:
    """A JavaScript regex searched anywhere in the final answer."""
    pattern = compile_js_regex(spec.value, spec.flags)
    match = pattern.search(ctx.output)
    text = f"regex /{spec.value}/{spec.flags}"
    if match:
        return Evaluation.check(True, text, f"matched {preview(match.group(0))}")
    return Evaluation.check(False, text, f"no match in output {preview(ctx.output)}")


def compile_js_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """Compile a JavaScript RegExp source and flags as the closest Python pattern.

    Raises ValueError on an unknown flag and re.error on a pattern Python cannot read, both of which
    surface as a grader error naming the assertion.
    """
    py_flags = 0
    for flag in flags:
        if flag not in _JS_FLAGS:
            raise ValueError(f"invalid regex flag {flag!r} (JavaScript flags: dgimsuy)")
        py_flags |= _JS_FLAGS[flag]
    source = _JS_BACKREFERENCE.sub(r"(?P=\1)", _JS_NAMED_GROUP.sub("(?P<", pattern))
    return re.compile(source, py_flags)
