"""composite: several named graders combined into one score, as AgentV's CompositeGrader does.

Members are graded like any assertion (recursively, so composites nest) and kept in the result
as AgentV's nested `scores`. Aggregators: `weighted_average` (weights by member name, default 1),
`threshold` (share of passing members; the composite passes at the threshold), `code-grader`
(a shell command reading every member's result on stdin) and `llm-grader` (an LLM reads them).
A member that errors makes the composite an error (AgentV would count it as 0 or leave it out),
and so does an aggregator that crashes or prints no score (`run --agentv-scoring`: a code grader
member that fails scores 0 instead, as in AgentV).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation, preview
from evals_pipeline.grading.grader_process import run_grader
from evals_pipeline.grading.llm_grader import (
    FreeformReply,
    JudgedEvaluation,
    excerpt,
    grade_assertion,
    llm_client,
)
from evals_pipeline.grading.llm_prompt import FREEFORM_SCHEMA
from evals_pipeline.grading.registry import evaluate, evaluator
from evals_pipeline.grading.scoring import agentv_scored
from evals_pipeline.grading.trial import judge_usage
from evals_pipeline.llm import LlmRequest, complete_structured
from evals_pipeline.models.assertions import (
    PROMPT_FILE_PREFIX,
    AssertionSpec,
    CodeAggregator,
    CodeGraderAssertion,
    CompositeAssertion,
    LlmAggregator,
    ThresholdAggregator,
)
from evals_pipeline.models.grade import AssertionOutcome, GraderResult
from evals_pipeline.process import stderr_reason

DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all grader results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail), and reasoning."""
"""AgentV's default prompt of the llm-grader aggregator."""

_AGENTV_VERDICT = {"pass": "pass", "fail": "fail", "error": "skip"}


@evaluator(CompositeAssertion)
def evaluate_composite(spec: CompositeAssertion, ctx: GradingContext) -> Evaluation:
    """Grade every member, then aggregate their results."""
    members = [
        _member_grade(member, ctx, agentv_scoring=ctx.case.agentv_scoring)
        for member in spec.assertions
    ]
    failed = [m for m in members if m.verdict == "error"]
    if failed:
        reasons = "; ".join(f"member {m.name!r} failed: {m.error}" for m in failed)
        return _judged(members, score=None, error=reasons)
    aggregator = spec.aggregator
    if isinstance(aggregator, ThresholdAggregator):
        return _threshold(members, aggregator.threshold)
    if isinstance(aggregator, CodeAggregator):
        return _code(members, aggregator, ctx)
    if isinstance(aggregator, LlmAggregator):
        return _llm(members, aggregator, ctx)
    return _weighted_average(members, aggregator.weights)


def _member_grade(
    member: AssertionSpec, ctx: GradingContext, *, agentv_scoring: bool
) -> GraderResult:
    """One member's grade. With `run --agentv-scoring` a code grader that could not judge scores
    0, as AgentV's code grader scores itself, and is averaged in; any other member that fails
    fails the composite, which the trial then scores 0 (AgentV's composite throws)."""
    result = grade_assertion(member, partial(evaluate, member, ctx), threshold=ctx.case.threshold)
    if agentv_scoring and isinstance(member, CodeGraderAssertion):
        return agentv_scored(result, negate=member.negate)
    return result


def _judged(members: list[GraderResult], **fields: Any) -> JudgedEvaluation:
    """An evaluation carrying the members and the LLM usage of every member."""
    return JudgedEvaluation(children=members, judge_usage=judge_usage(members), **fields)


def _prefixed(members: list[GraderResult]) -> list[AssertionOutcome]:
    return [
        a.model_copy(update={"text": f"[{m.name}] {a.text}"}) for m in members for a in m.assertions
    ]


def _weighted_average(members: list[GraderResult], weights: dict[str, float]) -> Evaluation:
    members = [m.model_copy(update={"weight": weights.get(m.name, 1.0)}) for m in members]
    total = sum(m.weight for m in members)
    earned = sum((m.score or 0.0) * m.weight for m in members)
    return _judged(
        members,
        score=earned / total if total > 0 else 0.0,
        assertions=_prefixed(members),
        details={"aggregator": "weighted_average", **({"weights": weights} if weights else {})},
    )


def _threshold(members: list[GraderResult], threshold: float) -> Evaluation:
    passing = sum(1 for m in members if m.verdict == "pass")
    score = passing / len(members)
    passed = score >= threshold
    summary = AssertionOutcome(
        text=f"{passing}/{len(members)} evaluators passed (threshold: {threshold:g})",
        passed=passed,
    )
    return _judged(
        members,
        score=score,
        passed=passed,
        assertions=[summary, *_prefixed(members)],
        details={"aggregator": "threshold", "threshold": threshold},
    )


def member_results(members: list[GraderResult]) -> dict[str, dict[str, Any]]:
    """The members' results by name, in AgentV's shape (what aggregators read)."""
    return {
        m.name: {
            "score": m.score,
            "verdict": _AGENTV_VERDICT[m.verdict],
            "assertions": [a.model_dump(exclude_none=True) for a in m.assertions],
            "expectedAspectCount": len(m.assertions) or 1,
            **({"details": m.details} if m.details else {}),
            **(
                {"scores": [child.model_dump(exclude_none=True) for child in m.scores]}
                if m.scores
                else {}
            ),
        }
        for m in members
    }


def _code(
    members: list[GraderResult], aggregator: CodeAggregator, ctx: GradingContext
) -> Evaluation:
    """Run the aggregator command with `{results: {...}}` on stdin; it prints the score."""
    stdin = json.dumps({"results": member_results(members)}, indent=2)
    cwd = Path(ctx.case.base_dir)
    result = run_grader(
        aggregator.path,
        cwd=cwd,
        timeout_seconds=aggregator.timeout_seconds,
        stdin=stdin.encode("utf-8"),
        suite_dir=cwd,
    )
    stderr = result.stderr[-4_000:] or None
    if result.error is not None or result.timed_out or result.exit_code != 0:
        how = result.error or (
            f"timed out after {aggregator.timeout_seconds:g} s"
            if result.timed_out
            else f"exited with code {result.exit_code}"
        )
        said = stderr_reason(stderr or "")
        reason = f"code aggregator {how}: {said}" if said else f"code aggregator {how}"
        return _judged(members, score=None, error=reason, stderr=stderr)
    stdout = result.stdout.decode("utf-8", "replace").strip()
    try:
        data = json.loads(stdout)
    except ValueError:
        data = None
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float):
        return _judged(
            members,
            score=None,
            error=f"code aggregator printed no numeric score: {preview(stdout)}",
            stderr=stderr,
        )
    assert isinstance(data, dict)
    verdict = data.get("verdict")
    entries = data.get("assertions")
    assertions = [
        AssertionOutcome(
            text=entry["text"],
            passed=bool(entry.get("passed")),
            evidence=entry.get("evidence") if isinstance(entry.get("evidence"), str) else None,
        )
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("text"), str)
    ]
    return _judged(
        members,
        score=float(score),
        passed={"pass": True, "fail": False}.get(verdict) if isinstance(verdict, str) else None,
        assertions=assertions,
        details={"aggregator": "code-grader", "command": aggregator.path},
        stderr=stderr,
    )


def _llm(members: list[GraderResult], aggregator: LlmAggregator, ctx: GradingContext) -> Evaluation:
    """Ask an LLM for the score, given every member's result."""
    target = aggregator.target or ctx.case.grader_target
    key = None if target is None else f"{target}@{aggregator.model}" if aggregator.model else target
    client = llm_client(key, ctx)
    if isinstance(client, Evaluation):
        return _judged(members, score=None, error=client.error)
    template = DEFAULT_AGGREGATOR_PROMPT
    if aggregator.prompt is not None:
        if aggregator.prompt.startswith(PROMPT_FILE_PREFIX):
            file = Path(ctx.case.base_dir) / aggregator.prompt[len(PROMPT_FILE_PREFIX) :]
            template = file.read_text(encoding="utf-8")
        else:
            template = aggregator.prompt
    results = json.dumps(member_results(members), indent=2)
    question = template.replace("{{EVALUATOR_RESULTS_JSON}}", results)
    reply = complete_structured(
        client, LlmRequest.ask(question, system=FREEFORM_SCHEMA), FreeformReply, repairs=1
    )
    usage = judge_usage(members)
    total = reply.usage if usage is None else usage + reply.usage
    details = {"aggregator": "llm-grader", "grader_target": key}
    if reply.value is None:
        error = f"llm aggregator on {key!r}: {reply.error or 'no usable reply'}"
        if reply.texts:
            error += f"; the model's last reply: {excerpt(reply.texts[-1])}"
        return JudgedEvaluation(
            score=None, error=error, children=members, judge_usage=total, details=details
        )
    value = reply.value
    assert isinstance(value, FreeformReply)
    return JudgedEvaluation(
        score=value.score,
        assertions=[
            AssertionOutcome(text=s.text, passed=s.passed, evidence=s.evidence)
            for s in value.assertions[:8]
        ],
        children=members,
        judge_usage=total,
        details=details,
    )
