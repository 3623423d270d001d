"""The environmental tier (§9, E1-E3): the task, the model provider or the sandbox failed, which
says nothing about the agent."""

from __future__ import annotations

from evals_pipeline.judging.attribution.evidence import cite, snip, snip_around, snip_command
from evals_pipeline.judging.attribution.rule import FailedTrial, Firing, Rule, fire
from evals_pipeline.judging.attribution.signals import (
    SANDBOX,
    delay_ms,
    event_text,
    http_status,
    model_call,
    model_output,
    provider_error,
    provider_signal,
    tool_failed,
)
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.events import EnrichedEvent

E2_BACKOFF_SHARE = 0.25
PROVIDER_ERRORS_IN_A_ROW = 3


def _task_environment_defect(t: FailedTrial) -> Firing | None:
    if t.session.status == "setup_error" or t.grade.failure_stage == "setup":
        detail = message_of(t.session.error or t.grade.error) or "workspace setup failed"
        return fire("task_environment_defect", "setup_failed", f"setup: {snip(detail)}")
    return None


def _llm_provider_error(t: FailedTrial) -> Firing | None:
    s = t.session
    if s.status == "agent_error" and s.error and provider_signal(s.error.message):
        return fire(
            "llm_provider_error",
            "terminated",
            f"session.error: {snip(s.error.message)}",
            terminal=True,
        )
    last = next((e for e in reversed(t.events) if model_call(e)), None)
    if last is not None and provider_error(last):
        return fire("llm_provider_error", "last_call", cite(last, event_text(last)))
    run: list[EnrichedEvent] = []
    for event in t.events:
        if event.kind == "error" and provider_error(event):
            run.append(event)
            if len(run) >= PROVIDER_ERRORS_IN_A_ROW:
                errors = [cite(e, event_text(e)) for e in run]
                return fire("llm_provider_error", "consecutive_errors", *errors)
        elif model_output(event):
            run = []
    wall = t.wall_ms
    if s.status == "timed_out" and wall:
        # pi's closing auto_retry_end is a retry event with neither a delay nor an error.
        retries = [e for e in t.events if e.kind == "retry" and (delay_ms(e) or provider_error(e))]
        backoff = sum(delay_ms(e) for e in retries)
        if backoff / wall >= E2_BACKOFF_SHARE:
            statuses = sorted({str(c) for e in retries if (c := http_status(e)) is not None})
            summary = (
                f"{len(retries)} provider retries (HTTP {', '.join(statuses) or 'unknown'}): "
                f"{backoff / 1000:g} s back-off of {wall / 1000:g} s wall time "
                f"({backoff / wall:.0%})"
            )
            cites = [cite(e, event_text(e)) for e in retries if delay_ms(e)]
            return fire("llm_provider_error", "backoff_share", summary, *cites)
    return None


def _sandbox_infra_failure(t: FailedTrial) -> Firing | None:
    s = t.session
    if s.status == "agent_error":
        for name, text in (("session.error", message_of(s.error) or ""), ("stderr", s.stderr)):
            if match := SANDBOX.search(text):
                return fire(
                    "sandbox_infra_failure",
                    "terminated",
                    f"{name}: {snip_around(text, match)}",
                    terminal=True,
                )
    for call in t.tool_calls:
        output = call.tool_output or ""
        if tool_failed(call) and (match := SANDBOX.search(output)):
            return fire(
                "sandbox_infra_failure", "tool_output", cite(call, snip_around(output, match))
            )
    for call in t.tool_calls:
        if call.exit_code == 137 and call.status != "timeout" and s.status != "timed_out":
            summary = f"exit code 137 (killed) without a timeout: {snip_command(call)}"
            return fire("sandbox_infra_failure", "exit_137", cite(call, summary))
    return None


# In §9.1's precedence.
RULES: tuple[Rule, ...] = (_task_environment_defect, _llm_provider_error, _sandbox_infra_failure)
