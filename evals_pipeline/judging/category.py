"""The panel's check of a failed trial's failure category (judging.md §9.2): a one-vs-rest binary
judge per trial, grounded like the dimension judges. PASS means the category the rules chose fits;
the rules still decide the category, and the check says how far the panel agrees.
"""

from __future__ import annotations

from evals_pipeline.judging.dimension import DimensionVote, judge_binary
from evals_pipeline.judging.input import JudgeInput
from evals_pipeline.llm import LlmClient
from evals_pipeline.models.judging import FailureCategory, FailureClassification

CATEGORY_MEANS: dict[FailureCategory, str] = {
    "task_environment_defect": "the task or its environment was broken before the agent acted: "
    "the repository does not build or install, the tests to fix already pass, or dependencies "
    "failed to install",
    "llm_provider_error": "the agent's model provider failed it: rate limits (HTTP 429), "
    "overloaded or 5xx errors, connection resets, or most of the time went to provider retries",
    "sandbox_infra_failure": "the sandbox or tool server failed: no disk or memory left, a killed "
    "or dead container, a tool server error",
    "context_window_exhausted": "the agent ran out of context window",
    "wall_clock_timeout": "the agent ran out of wall-clock time",
    "step_or_cost_budget_exhausted": "the agent ran out of its turn, cost or output-token budget",
    "spec_misunderstanding": "the agent worked on the wrong thing: no change, a change to none of "
    "the files the task concerns, or a constraint of the task violated",
    "unverified_completion": "the agent stopped without a test or build run after its last edit, "
    "or claimed a success its own test output contradicts",
    "incorrect_implementation": "the agent changed the right code and checked it, but the change "
    "is wrong: tests still fail or it does not compile",
}

SYSTEM_PROMPT = """A coding agent's trial failed. Rules classified the primary reason as
`{category}` ({tier} failure): {means}.
The rule that fired: {rule_id}.{evidence}
Decide whether `{category}` is the right primary reason this trial failed, only from the input
below; do not use background knowledge. Work in this order: first copy word-for-word quotes
(12-300 characters each) from the input as evidence, each with the claim it supports and, when it
comes from the transcript, its source tag such as "event:12"; then decide.
PASS means the category fits. FAIL means another reason explains the failure better; name it in
the critique. If the evidence is insufficient, answer FAIL with confidence at most 0.5.
Reply with one JSON object and nothing else:
{{"dimension": "failure_category", "evidence": [{{"quote": "...", "source": "event:12",
 "claim": "..."}}], "verdict": "PASS" or "FAIL", "confidence": 0.0-1.0,
 "critique": "at most 80 words"}}"""

SHOWN_EVIDENCE = 3


def category_prompt(failure: FailureClassification) -> str:
    """The instructions for checking `failure.primary`, with what made the rule fire."""
    shown = [f"\n- {e}" for e in failure.evidence[:SHOWN_EVIDENCE]]
    return SYSTEM_PROMPT.format(
        category=failure.primary,
        tier=failure.tier,
        means=CATEGORY_MEANS[failure.primary],
        rule_id=failure.rule_id,
        evidence=" It fired on:" + "".join(shown) if shown else "",
    )


def judge_category(
    client: LlmClient, failure: FailureClassification, judge_input: JudgeInput
) -> DimensionVote:
    """Ask `client` whether `failure.primary` fits the trial shown in `judge_input`."""
    return judge_binary(client, "failure_category", category_prompt(failure), judge_input)
