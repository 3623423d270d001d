"""One binary LLM judge on one dimension of one trial (judging.md §2-3): quotes first, verdict
second, strict JSON, then grounding; a verdict whose quotes are not found is re-asked once and
otherwise abstains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.judging.grounding import GroundingResult, ground_verdict
from evals_pipeline.judging.input import JudgeInput
from evals_pipeline.llm import LlmClient, LlmRequest, LlmUsage, complete_structured
from evals_pipeline.models.judging import Dimension, Evidence, JudgeVerdict

Subject = Dimension | Literal["failure_category"]
"""What a binary judge decides: one dimension, or whether a failed trial's category fits."""

PASS_MEANS: dict[Dimension, tuple[str, str, str]] = {
    "correctness": (
        "the final change resolves the stated problem and introduces no error",
        "test or run output, or code lines, showing correct behaviour",
        "failing output, a wrong line, or task text the change contradicts",
    ),
    "completeness": (
        "every explicit requirement of the task is addressed",
        "one quote per requirement: the task text and where it is handled",
        "the text of the requirement left unhandled",
    ),
    "codeQuality": (
        "the change is idiomatic and readable, with no debug leftovers, no new lint or type "
        "errors and no security smell",
        "diff lines",
        "the offending diff lines",
    ),
    "minimalDiff": (
        "the change is limited to what the task needs: no unrelated files, no reformatting "
        "churn, no deleted or weakened tests",
        "diff lines that show the change's extent",
        "an unrelated hunk or a deleted test",
    ),
    "verification": (
        "the agent verified its work after its last edit, and its claims match the transcript",
        "a test or build command and its output AFTER the last edit event",
        "the absence of such a run, or a claim the output contradicts",
    ),
}

SYSTEM_PROMPT = """You are a strict evaluator of one dimension of a coding agent's work: {dimension}.
PASS means: {pass_means}.
Judge only this dimension, only from the input below; do not use background knowledge and do not
reward length. Work in this order: first copy word-for-word quotes (12-300 characters each) from
the input as evidence, each with the claim it supports and, when it comes from the transcript, its
source tag such as "event:12"; retract any claim you cannot quote; then decide.
Evidence needed for PASS: {pass_quote}. Evidence for FAIL: {fail_quote}.
If the evidence is insufficient, answer FAIL with confidence at most 0.5.
Reply with one JSON object and nothing else:
{{"dimension": "{dimension}", "evidence": [{{"quote": "...", "source": "event:12", "claim": "..."}}],
 "verdict": "PASS" or "FAIL", "confidence": 0.0-1.0, "critique": "at most 80 words"}}"""


class _EvidenceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    quote: str
    source: str | None = None
    claim: str = ""


class DimensionReply(BaseModel):
    """The judge's JSON as asked for in SYSTEM_PROMPT."""

    model_config = ConfigDict(extra="ignore")

    dimension: str | None = None
    evidence: list[_EvidenceReply] = Field(default_factory=list)
    verdict: Literal["PASS", "FAIL"]
    confidence: float = Field(ge=0, le=1)
    critique: str = ""


@dataclass(frozen=True)
class DimensionVote:
    """A judge's grounded verdict, or the reason it has none; and what the calls cost."""

    judge: str
    verdict: JudgeVerdict | None
    usage: LlmUsage
    error: str | None = None


def system_prompt(dimension: Dimension) -> str:
    """The instructions for one dimension's judge."""
    pass_means, pass_quote, fail_quote = PASS_MEANS[dimension]
    return SYSTEM_PROMPT.format(
        dimension=dimension, pass_means=pass_means, pass_quote=pass_quote, fail_quote=fail_quote
    )


def judge_dimension(
    client: LlmClient, dimension: Dimension, judge_input: JudgeInput
) -> DimensionVote:
    """Ask `client` for a PASS/FAIL on `dimension`, ground its quotes, re-ask once if they fail."""
    return judge_binary(client, dimension, system_prompt(dimension), judge_input)


def judge_binary(
    client: LlmClient, subject: Subject, system: str, judge_input: JudgeInput
) -> DimensionVote:
    """Ask `client` for a PASS/FAIL on `subject` as `system` defines it, in the reply format of
    SYSTEM_PROMPT; ground its quotes and re-ask once if they fail."""
    request = LlmRequest.ask(judge_input.text, system=system)
    first = complete_structured(client, request, DimensionReply)
    usage = first.usage
    if first.value is None:
        return DimensionVote(client.name, None, usage, first.error or "no reply")
    grounded = _ground(client, subject, first.value, judge_input, retried=False)
    if not grounded.needs_retry:
        return DimensionVote(client.name, grounded.verdict, usage)
    answer = first.value.model_dump_json()
    again = complete_structured(
        client, request.followed_by(answer, grounded.retry_feedback or ""), DimensionReply
    )
    usage = usage + again.usage
    if again.value is None:
        # The re-ask failed outright: the first verdict stands, ungrounded, as an abstention.
        abstained = grounded.verdict.model_copy(update={"valid": False, "retried": True})
        return DimensionVote(client.name, abstained, usage, again.error)
    regrounded = _ground(client, subject, again.value, judge_input, retried=True)
    return DimensionVote(client.name, regrounded.verdict, usage)


def _ground(
    client: LlmClient,
    subject: Subject,
    reply: DimensionReply,
    judge_input: JudgeInput,
    *,
    retried: bool,
) -> GroundingResult:
    verdict = JudgeVerdict(
        judge=client.name,
        judge_model=client.model,
        dimension=subject,
        verdict=reply.verdict,
        confidence=reply.confidence,
        critique=reply.critique,
        evidence=tuple(
            Evidence(quote=e.quote, source=e.source, claim=e.claim) for e in reply.evidence
        ),
    )
    return ground_verdict(
        verdict,
        judge_input.text,
        sources=judge_input.sources or None,
        post_edit_runs=judge_input.post_edit_runs,
        retried=retried,
    )
