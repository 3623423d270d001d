"""execution-metrics: budgets on tool calls, LLM calls, tokens, cost, duration and exploration.

AgentV's grader: one check per limit given, score = passed ÷ checks, and a metric the run did not
record fails its check. Counts come from the transcript as AgentV computes them: tool calls over
every message, one LLM call per assistant message, tokens = input + output (cached not counted).
"""

from __future__ import annotations

from collections import Counter

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import ExecutionMetricsAssertion
from evals_pipeline.models.grade import AssertionOutcome

EXPLORATION_TOOLS: tuple[str, ...] = (
    "read",
    "grep",
    "glob",
    "search",
    "list",
    "Read",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
)
"""Read-only tools, by exact name (AgentV's DEFAULT_EXPLORATION_TOOLS)."""


def _limit(measured: float, limit: float, text: str) -> AssertionOutcome:
    passed = measured <= limit
    return AssertionOutcome(text=text.format(op="<=" if passed else ">"), passed=passed)


def _missing(text: str) -> AssertionOutcome:
    return AssertionOutcome(text=text, passed=False)


def _n(value: float) -> str:
    return f"{value:g}"


@evaluator(ExecutionMetricsAssertion)
def evaluate_execution_metrics(spec: ExecutionMetricsAssertion, ctx: GradingContext) -> Evaluation:
    """One check per configured limit; passed ÷ checks."""
    tools = Counter(call.tool for call in ctx.tool_calls)
    tool_calls = sum(tools.values())
    llm_calls = sum(1 for message in ctx.messages if message.role == "assistant")
    usage, cost, duration = ctx.session.token_usage, ctx.session.cost_usd, ctx.session.duration_ms
    checks: list[AssertionOutcome] = []
    actual: dict[str, float] = {}
    if spec.max_tool_calls is not None:
        actual["tool_calls"] = tool_calls
        text = f"Tool calls {tool_calls} {{op}} {_n(spec.max_tool_calls)} max"
        checks.append(_limit(tool_calls, spec.max_tool_calls, text))
    if spec.max_llm_calls is not None:
        actual["llm_calls"] = llm_calls
        text = f"LLM calls {llm_calls} {{op}} {_n(spec.max_llm_calls)} max"
        checks.append(_limit(llm_calls, spec.max_llm_calls, text))
    if spec.max_tokens is not None:
        if usage is None:
            checks.append(_missing("Token usage data not available"))
        else:
            tokens = usage.input + usage.output
            actual["tokens"] = tokens
            text = f"Total tokens {tokens} {{op}} {_n(spec.max_tokens)} max"
            checks.append(_limit(tokens, spec.max_tokens, text))
    if spec.max_cost_usd is not None:
        if cost is None:
            checks.append(_missing("Cost data not available"))
        else:
            actual["cost_usd"] = cost
            text = f"Cost ${cost:.4f} {{op}} ${spec.max_cost_usd:.4f} max"
            checks.append(_limit(cost, spec.max_cost_usd, text))
    if spec.max_duration_ms is not None:
        if duration is None:
            checks.append(_missing("Duration data not available"))
        else:
            actual["duration_ms"] = duration
            text = f"Duration {duration}ms {{op}} {_n(spec.max_duration_ms)}ms max"
            checks.append(_limit(duration, spec.max_duration_ms, text))
    if spec.target_exploration_ratio is not None:
        checks.append(_exploration(spec, tools, tool_calls, actual))
    passed = sum(1 for check in checks if check.passed)
    return Evaluation(
        score=passed / len(checks) if checks else 0.0,
        assertions=checks,
        details={"actual": actual},
    )


def _exploration(
    spec: ExecutionMetricsAssertion, tools: Counter[str], total: int, actual: dict[str, float]
) -> AssertionOutcome:
    target = spec.target_exploration_ratio
    assert target is not None
    if total == 0:
        return _missing("Exploration ratio not available (no tool calls)")
    ratio = sum(tools[name] for name in EXPLORATION_TOOLS) / total
    actual["exploration_ratio"] = ratio
    diff = abs(ratio - target)
    if diff <= spec.exploration_tolerance:
        return AssertionOutcome(
            text=f"Exploration ratio {ratio:.2f} within tolerance of target {_n(target)}",
            passed=True,
        )
    return AssertionOutcome(
        text=f"Exploration ratio {ratio:.2f} outside tolerance of target {_n(target)} "
        f"(diff: {diff:.2f}, tolerance: {_n(spec.exploration_tolerance)})",
        passed=False,
    )
