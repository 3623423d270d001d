"""AgentV's conversation mode, judge side (`orchestrator.ts` runConversationMode): each turn's
answer graded with the conversation so far as its input, then the whole transcript by the
test's own assertions, and the scores aggregated (mean, min or max) into the test's.

`on_turn_failure: stop` is applied here: the turns after the first one scoring below the
threshold score 0 and the transcript graded as a whole ends with that turn, as in AgentV (which
does not send the later turns at all; here they were sent, and are not graded).
"""

from __future__ import annotations

from functools import partial

from evals_pipeline.grading.context import GradingContext, LlmClientSource
from evals_pipeline.grading.llm_grader import grade_assertion
from evals_pipeline.grading.registry import evaluate
from evals_pipeline.grading.scoring import meets, trial_score
from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.conversation import Aggregation, History, content_text, windowed
from evals_pipeline.models.grade import AssertionOutcome, GraderResult
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session
from evals_pipeline.process import now_ms

SKIPPED = "Skipped due to previous turn failure"
NO_TURN_GRADER = (
    "the turn has an expected_output but no assertions, and no grader target to judge it: give "
    "the agent target a grader_target or the turn assertions"
)


class TurnContext(GradingContext):
    """The graders' view of one turn: its answer as the output, the history as the messages."""

    def __init__(
        self,
        case: ResolvedCase,
        session: Session,
        llm: LlmClientSource | None,
        *,
        answer: str,
        messages: list[Message],
    ) -> None:
        super().__init__(case, session, llm)
        # Fill the lazily loaded fields: a turn's are known, not read from the session.
        self.__dict__["output"] = answer
        self.__dict__["messages"] = messages


def grade_conversation(
    case: ResolvedCase, session: Session, llm: LlmClientSource | None = None
) -> tuple[float, list[GraderResult]]:
    """The test's score and one result per turn (`turn-<n>`) plus `conversation` when the test
    has assertions of its own."""
    conversation = case.conversation
    assert conversation is not None
    threshold = case.threshold
    history: History = [(m.role, content_text(m.content)) for m in case.input]
    results: list[GraderResult] = []
    stopped = False
    for index, (turn, record) in enumerate(zip(conversation.turns, session.turns, strict=False), 1):
        name = f"turn-{index}"
        start = now_ms()
        if stopped:
            results.append(
                _turn(name, 0.0, threshold, start, [AssertionOutcome(text=SKIPPED, passed=False)])
            )
            continue
        history.append(("user", turn.input))
        if record.error is not None:
            outcome = AssertionOutcome(text=f"Provider error: {record.error}", passed=False)
            results.append(_turn(name, 0.0, threshold, start, [outcome]))
            stopped = conversation.on_turn_failure == "stop"
            continue
        history.append(("assistant", record.answer))
        if not turn.assertions:
            if turn.expected_output:
                outcome = AssertionOutcome(text=NO_TURN_GRADER, passed=False)
                results.append(_turn(name, 0.0, threshold, start, [outcome]))
            else:
                results.append(_turn(name, 1.0, threshold, start, []))  # nothing to check
            continue
        window = _messages(windowed(history, conversation.window_size))
        turn_case = case.model_copy(
            update={
                "test_id": f"{case.test_id}/turn-{index}",
                "input": window,
                "expected_output": turn.expected_output,
                "assertions": turn.assertions,
                "conversation": None,
            }
        )
        context = TurnContext(turn_case, session, llm, answer=record.answer, messages=window)
        graded = _graded(turn.assertions, context, threshold)
        score = trial_score(graded)
        results.append(_turn(name, score, threshold, start, _outcomes(graded), graded))
        if conversation.on_turn_failure == "stop" and not meets(score, threshold):
            stopped = True
    if case.assertions:
        start = now_ms()
        transcript = "\n\n".join(f"{role}: {content}" for role, content in history)
        messages = _messages(history)
        whole = case.model_copy(
            update={
                "test_id": f"{case.test_id}/conversation",
                "input": messages,
                "expected_output": [],
                "conversation": None,
            }
        )
        context = TurnContext(whole, session, llm, answer=transcript, messages=messages)
        graded = _graded(case.assertions, context, threshold)
        score = trial_score(graded)
        results.append(_turn("conversation", score, threshold, start, _outcomes(graded), graded))
    scores = [r.score for r in results if r.score is not None]
    return aggregate(scores, conversation.aggregation), results


def aggregate(scores: list[float], aggregation: Aggregation) -> float:
    """AgentV's aggregateConversationScores: 1 with no scores, else their mean, min or max."""
    if not scores:
        return 1.0
    if aggregation == "min":
        return min(scores)
    if aggregation == "max":
        return max(scores)
    return sum(scores) / len(scores)


def _graded(
    assertions: list[AssertionSpec], context: GradingContext, threshold: float
) -> list[GraderResult]:
    return [
        grade_assertion(spec, partial(evaluate, spec, context), threshold=threshold)
        for spec in assertions
    ]


def _outcomes(graded: list[GraderResult]) -> list[AssertionOutcome]:
    outcomes = [a for g in graded for a in g.assertions]
    for g in graded:
        if g.verdict == "error":
            outcomes.append(AssertionOutcome(text=f"{g.name}: {g.error}", passed=False))
    return outcomes


def _turn(
    name: str,
    score: float,
    threshold: float,
    start_ms: int,
    assertions: list[AssertionOutcome],
    graded: list[GraderResult] | None = None,
) -> GraderResult:
    """One turn (or the whole conversation) as a grader result; its verdict is against the
    test's threshold, as AgentV's scoreToVerdict."""
    usages = [g.judge_usage for g in graded or [] if g.judge_usage is not None]
    return GraderResult(
        name=name,
        type="rubrics",
        score=score,
        verdict="pass" if meets(score, threshold) else "fail",
        assertions=assertions,
        details={"graders": [g.model_dump(exclude_none=True) for g in graded]} if graded else None,
        start_ms=start_ms,
        duration_ms=now_ms() - start_ms,
        judge_usage=sum(usages[1:], usages[0]) if usages else None,
    )


def _messages(history: History) -> list[Message]:
    return [Message.model_validate({"role": role, "content": content}) for role, content in history]
