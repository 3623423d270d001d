"""Usage summed in one pass equals usage added pair by pair: the same counts, and the known
costs added in the same order (None when none is known)."""

from __future__ import annotations

from functools import reduce
from operator import add

from evals_pipeline.llm.usage import LlmUsage


def test_a_total_is_the_sum_added_pair_by_pair() -> None:
    usages = [
        LlmUsage(calls=1, input_tokens=10, output_tokens=2, cost_usd=0.1),
        LlmUsage(calls=2, errors=1, input_tokens=7, output_tokens=3),
        LlmUsage(calls=1, input_tokens=1, output_tokens=1, cost_usd=0.2),
        LlmUsage(calls=3, input_tokens=5, output_tokens=4, cost_usd=0.7),
    ]
    total = LlmUsage.total(usages)
    assert total == reduce(add, usages, LlmUsage())
    assert total.calls == 7 and total.errors == 1 and total.cost_usd == (0.1 + 0.2) + 0.7
    assert LlmUsage.total(u.model_copy(update={"cost_usd": None}) for u in usages).cost_usd is None
    assert LlmUsage.total([]) == LlmUsage()
