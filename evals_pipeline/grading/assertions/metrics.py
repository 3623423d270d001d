"""Budget assertions on what a run consumed: latency, cost and token usage.

An unknown measurement fails its check (AgentV's rule): a budget nobody can verify is not met.
"""

from __future__ import annotations

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import CostAssertion, LatencyAssertion, TokenUsageAssertion
from evals_pipeline.models.grade import AssertionOutcome


@evaluator(LatencyAssertion)
def evaluate_latency(spec: LatencyAssertion, ctx: GradingContext) -> Evaluation:
    """1 when the run's duration_ms is within the threshold."""
    text = f"duration ≤ {spec.threshold:g} ms"
    duration = ctx.session.duration_ms
    if duration is None:
        return Evaluation.check(False, text, "no duration was recorded for this run")
    return Evaluation.check(duration <= spec.threshold, text, f"took {duration} ms")


@evaluator(CostAssertion)
def evaluate_cost(spec: CostAssertion, ctx: GradingContext) -> Evaluation:
    """1 when the run's cost_usd is within the budget."""
    text = f"cost ≤ ${spec.budget:g}"
    cost = ctx.session.cost_usd
    if cost is None:
        return Evaluation.check(False, text, "no cost was recorded for this run")
    return Evaluation.check(cost <= spec.budget, text, f"cost ${cost:.6g}")


@evaluator(TokenUsageAssertion)
def evaluate_token_usage(spec: TokenUsageAssertion, ctx: GradingContext) -> Evaluation:
    """1 when every given limit holds; total = input + output + cached."""
    usage = ctx.session.token_usage
    limits = {"total": spec.max_total, "input": spec.max_input, "output": spec.max_output}
    given = {name: limit for name, limit in limits.items() if limit is not None}
    if usage is None:
        return Evaluation.check(False, "token usage within limits", "no token usage was recorded")
    measured = {"total": usage.total, "input": usage.input, "output": usage.output}
    checks = [
        AssertionOutcome(
            text=f"{name} tokens ≤ {limit}",
            passed=measured[name] <= limit,
            evidence=f"used {measured[name]}",
        )
        for name, limit in given.items()
    ]
    passed = all(c.passed for c in checks)
    return Evaluation(score=1.0 if passed else 0.0, assertions=checks, details=measured)
