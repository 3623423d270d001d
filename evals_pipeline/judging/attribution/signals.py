"""What an event says: provider errors and their HTTP status, retry back-off, failed tool calls,
and shell commands that test or check the work."""

from __future__ import annotations

import re

from evals_pipeline.enrichers.milestones import is_test_command, tool_command
from evals_pipeline.models.events import EnrichedEvent

PROVIDER_STATUSES = frozenset({429, 500, 502, 503, 504, 529})

_PROVIDER_MESSAGE = re.compile(
    r"rate.?limit|overloaded|internal server error|service unavailable|bad gateway"
    r"|gateway time-?out|APIConnectionError|ECONNRESET",
    re.IGNORECASE,
)
# A status code in an error message, e.g. "API Error: 529 {...}" or "HTTP 429": a bare number
# could be a duration or a count.
_STATUS_IN_TEXT = re.compile(
    r"(?:\bhttp(?:/[\d.]+)?|\bstatus(?:[ _]?code)?|\bapi error|\berror)\W{0,3}(\d{3})\b",
    re.IGNORECASE,
)
SANDBOX = re.compile(
    r"No space left on device|ENOSPC|OOMKilled|Cannot allocate memory"
    r"|container .*(?:exited|not running|died)|docker: Error"
    r"|connection refused.*(?:sandbox|tool server)",
    re.IGNORECASE,
)
_STATUS_KEYS = ("api_error_status", "error_status", "status", "status_code", "http_status")
_DELAY_KEYS = ("retry_delay_ms", "delayMs", "delay_ms")
_FAILED_STATUSES = frozenset({"error", "timeout", "cancelled"})
_FAILURES_IN_OUTPUT = re.compile(
    r"\b[1-9]\d*\s+(?:failed|failures?|errors?)\b|\bFAILED\b|^FAIL\b", re.MULTILINE
)
# Commands that check the work besides tests (is_test_command): builds, type checks, running it.
_BUILD_OR_RUN = re.compile(
    r"(?:^|[\s;&|(/])(?:make|cmake|tsc|mypy|pyright|javac|gcc|g\+\+|clang"
    r"|cargo\s+(?:build|check|run)|go\s+(?:build|vet|run)|dotnet\s+(?:build|run)"
    r"|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?(?:build|start|typecheck)"
    r"|(?:mvn|mvnw|gradle|gradlew)\s+(?:\S+\s+)*(?:compile|build|package)"
    r"|python[\d.]*\s+(?:-m\s+(?:py_compile|compileall)|\S+\.py)|node\s+\S+\.[cm]?js)\b"
)


# --- model calls and the provider -------------------------------------------------------------


def model_output(event: EnrichedEvent) -> bool:
    return event.role == "assistant" and event.kind in ("message", "tool_call")


def model_call(event: EnrichedEvent) -> bool:
    """An event that ends a model call: its output, or the error or retry that replaced it."""
    return model_output(event) or event.kind in ("error", "retry")


def http_status(event: EnrichedEvent) -> int | None:
    detail = event.detail or {}
    for key in _STATUS_KEYS:
        value = detail.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    match = _STATUS_IN_TEXT.search(event_text(event))
    return int(match.group(1)) if match else None


def provider_signal(text: str) -> bool:
    match = _STATUS_IN_TEXT.search(text)
    return bool(_PROVIDER_MESSAGE.search(text)) or (
        match is not None and int(match.group(1)) in PROVIDER_STATUSES
    )


def provider_error(event: EnrichedEvent) -> bool:
    if event.kind not in ("error", "retry"):
        return False
    return http_status(event) in PROVIDER_STATUSES or bool(
        _PROVIDER_MESSAGE.search(event_text(event))
    )


def event_text(event: EnrichedEvent) -> str:
    detail = event.detail or {}
    extra = detail.get("error")
    parts = [event.text or "", extra if isinstance(extra, str) else ""]
    return " ".join(p for p in parts if p)


def delay_ms(event: EnrichedEvent) -> float:
    detail = event.detail or {}
    for key in _DELAY_KEYS:
        value = detail.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return 0.0


# --- tool calls -------------------------------------------------------------------------------


def tool_failed(event: EnrichedEvent) -> bool:
    if event.exit_code is not None:
        return event.exit_code != 0
    if event.status not in (None, "unknown"):
        return event.status in _FAILED_STATUSES
    # Some streams report neither for a shell command: its output is the witness.
    return event.tool == "Bash" and bool(_FAILURES_IN_OUTPUT.search(event.tool_output or ""))


def tests_failed(event: EnrichedEvent) -> bool:
    # `pytest | tail` exits 0: what the output says about the tests counts too.
    return tool_failed(event) or bool(_FAILURES_IN_OUTPUT.search(event.tool_output or ""))


def is_test(event: EnrichedEvent) -> bool:
    command = tool_command(event.tool_input) if event.tool == "Bash" else None
    return command is not None and is_test_command(command)


def is_check(event: EnrichedEvent) -> bool:
    command = tool_command(event.tool_input) if event.tool == "Bash" else None
    return command is not None and (is_test_command(command) or bool(_BUILD_OR_RUN.search(command)))
