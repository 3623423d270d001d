"""Two agents' work on one case, compared by each judge twice with the order swapped
(judging.md §5): a win counts only when both orders agree, otherwise it is a tie, and a judge that
picks the same slot both times is flagged as position-following.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.judging.grounding import MIN_VERIFIED_FRACTION, retry_feedback, verify_quote
from evals_pipeline.llm import LlmClient, LlmRequest, LlmUsage, complete_structured
from evals_pipeline.models.judging import (
    Dimension,
    PairwiseDimension,
    PairwiseReading,
    PairwiseVerdict,
)
from evals_pipeline.statistics import PairwiseJudgeResult, combine_pairwise, pairwise_judge

Slot = Literal["FIRST", "SECOND", "TIE"]
Reading = Literal["FIRST", "SECOND", "TIE", "INVALID"]

SYSTEM_PROMPT = """You compare two coding agents' work on the same task. Judge only from the input;
the order in which the two answers appear must not matter, and length is no merit.
First copy word-for-word quotes (12-300 characters) from the input that decide the comparison, each
with the claim it supports; then say which answer is better overall and on each dimension:
{dimensions}.
Reply with one JSON object and nothing else:
{{"evidence": [{{"quote": "...", "claim": "..."}}],
 "overall": "FIRST" or "SECOND" or "TIE",
 "per_dimension": {{{example}}},
 "confidence": 0.0-1.0, "critique": "at most 80 words"}}"""


class _Quote(BaseModel):
    model_config = ConfigDict(extra="ignore")

    quote: str
    claim: str = ""


class PairwiseReply(BaseModel):
    """A pairwise judge's JSON as asked for in SYSTEM_PROMPT."""

    model_config = ConfigDict(extra="ignore")

    evidence: list[_Quote] = Field(default_factory=list)
    overall: Slot
    per_dimension: dict[str, Slot] = Field(default_factory=dict)
    confidence: float = Field(default=1.0, ge=0, le=1)
    critique: str = ""


@dataclass(frozen=True)
class Contestant:
    """One agent's work on the case, rendered for the judge."""

    agent: str
    text: str


def order_pair(case_key: str, agent_x: str, agent_y: str, seed: int) -> tuple[str, str]:
    """Which agent is `A` (shown first in the first reading): drawn per case from `seed`."""
    first, second = sorted((agent_x, agent_y))
    draw = random.Random(f"{seed}:{case_key}:{first}:{second}").random()
    return (first, second) if draw < 0.5 else (second, first)


@dataclass(frozen=True)
class OrderReading:
    """One order's slot per dimension (and `overall`); empty when the call or grounding failed."""

    slots: dict[str, Reading]
    usage: LlmUsage
    error: str | None = None


@dataclass(frozen=True)
class JudgeReadings:
    """One judge's two readings of a pair: A first, then B first."""

    judge: str
    model: str
    first: OrderReading
    second: OrderReading

    @property
    def usage(self) -> LlmUsage:
        return self.first.usage + self.second.usage

    @property
    def errors(self) -> list[str]:
        return [f"{self.judge}: {e}" for e in (self.first.error, self.second.error) if e]


@dataclass(frozen=True)
class PairReadings:
    """Two agents' work on one case as read by some judges; `agent_a` leads the first reading."""

    case_key: str
    test_id: str
    agent_a: str
    agent_b: str
    readings: tuple[JudgeReadings, ...]


def read_pair(
    judge: LlmClient,
    *,
    task: str,
    a: Contestant,
    b: Contestant,
    dimensions: Sequence[Dimension],
) -> JudgeReadings:
    """`judge` reads A/B, then B/A."""
    first = _reading(judge, task, a, b, dimensions)
    second = _reading(judge, task, b, a, dimensions)
    return JudgeReadings(judge.name, judge.model, first, second)


def pairwise_verdict(
    pair: PairReadings, *, dimensions: Sequence[Dimension], seed: int
) -> PairwiseVerdict:
    """The panel verdict overall and per dimension from every judge's two readings."""
    usage = LlmUsage()
    errors: list[str] = []
    results: dict[str, list[tuple[str, PairwiseJudgeResult]]] = {
        d: [] for d in ("overall", *dimensions)
    }
    for judged in pair.readings:
        usage = usage + judged.usage
        errors += judged.errors
        for dimension, per_dimension in results.items():
            result = pairwise_judge(
                judged.first.slots.get(dimension, "INVALID"),
                judged.second.slots.get(dimension, "INVALID"),
                judge_model=judged.model,
            )
            per_dimension.append((judged.judge, result))
    panels = {d: _panel(d, rs) for d, rs in results.items()}
    overall = panels.pop("overall")
    winner = {"A": pair.agent_a, "B": pair.agent_b}.get(overall.verdict)
    return PairwiseVerdict(
        case_key=pair.case_key,
        test_id=pair.test_id,
        agent_a=pair.agent_a,
        agent_b=pair.agent_b,
        seed=seed,
        winner=winner,
        overall=overall,
        per_dimension=tuple(panels.values()),
        bias_detected=overall.bias_detected or any(p.bias_detected for p in panels.values()),
        errors=tuple(errors),
        judge_calls=usage.calls,
        judge_input_tokens=usage.input_tokens,
        judge_output_tokens=usage.output_tokens,
        judge_cost_usd=usage.cost_usd,
    )


def compare_pair(
    judges: Sequence[LlmClient],
    *,
    case_key: str,
    test_id: str,
    task: str,
    a: Contestant,
    b: Contestant,
    dimensions: Sequence[Dimension],
    seed: int,
) -> PairwiseVerdict:
    """Every judge reads A/B then B/A; the panel verdict overall and per dimension."""
    readings = tuple(read_pair(j, task=task, a=a, b=b, dimensions=dimensions) for j in judges)
    pair = PairReadings(case_key, test_id, a.agent, b.agent, readings)
    return pairwise_verdict(pair, dimensions=dimensions, seed=seed)


def _panel(dimension: str, results: list[tuple[str, PairwiseJudgeResult]]) -> PairwiseDimension:
    combined = combine_pairwise([result for _, result in results])
    return PairwiseDimension(
        dimension=dimension,
        readings=tuple(
            PairwiseReading(judge=judge, **result.model_dump()) for judge, result in results
        ),
        verdict=combined.verdict,
        bias_detected=combined.bias_detected,
    )


def render_pair(task: str, first: Contestant, second: Contestant) -> str:
    """The judge's input: the task, then the two answers in the order given."""
    return f"## Task\n{task}\n\n# FIRST answer\n{first.text}\n\n# SECOND answer\n{second.text}\n"


def _reading(
    judge: LlmClient,
    task: str,
    first: Contestant,
    second: Contestant,
    dimensions: Sequence[Dimension],
) -> OrderReading:
    """One order's slot per dimension; INVALID everywhere when the call or its grounding fails."""
    text = render_pair(task, first, second)
    example = ", ".join(f'"{d}": "FIRST"' for d in dimensions)
    system = SYSTEM_PROMPT.format(dimensions=", ".join(dimensions), example=example)
    request = LlmRequest.ask(text, system=system)
    reply = complete_structured(judge, request, PairwiseReply)
    usage = reply.usage
    if reply.value is None:
        return OrderReading({}, usage, reply.error or "no reply")
    value = reply.value
    unverified = _unverified(value, text)
    if unverified is not None:
        again = complete_structured(
            judge,
            request.followed_by(value.model_dump_json(), retry_feedback(unverified)),
            PairwiseReply,
        )
        usage = usage + again.usage
        if again.value is None or _unverified(again.value, text) is not None:
            return OrderReading({}, usage, "evidence not found in the input after one re-ask")
        value = again.value
    slots: dict[str, Reading] = {"overall": value.overall}
    for dimension in dimensions:
        slots[dimension] = value.per_dimension.get(dimension, "INVALID")
    return OrderReading(slots, usage)


def _unverified(reply: PairwiseReply, text: str) -> list[str] | None:
    """The quotes not found in `text` when too few verify (§3.1), else None."""
    checks = [(e.quote, verify_quote(e.quote, text).verified) for e in reply.evidence]
    verified = sum(ok for _, ok in checks)
    if checks and verified / len(checks) >= MIN_VERIFIED_FRACTION:
        return None
    return [quote for quote, ok in checks if not ok]
