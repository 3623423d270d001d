"""How many agent runs, or LLM calls, one process has in flight per provider, whatever the
suite's `workers`: a deployment's own limits (EVALS_PIPELINE_PROVIDER_LIMITS, `run --limit`).

`workers` says how parallel a suite may be; a provider limit says how much one provider (an
account, a rate limit, a machine's memory for Claude Code) can take, across every suite and step
the process runs. Keys are provider names as targets write them: agent providers (`claude-code`,
`codex`, `pi-agent`, `cli`, ...) count agent runs, LLM providers (`anthropic`, `openai`, ...)
count API calls, by graders, judges and LLM targets alike. Across processes (several Dagster
runs at once), the step-level Dagster pools hold (defs/pools.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.models.targets import LlmTarget, TargetSpec
from evals_pipeline.settings import Settings

LIMITS_ENV = "EVALS_PIPELINE_PROVIDER_LIMITS"


class LimitsError(ValueError, EvalsPipelineError):
    """A limits setting that does not parse; the message says what to write instead."""


def parse_limits(text: str, source: str = LIMITS_ENV) -> dict[str, int]:
    """`claude-code=2,anthropic=4` (commas or spaces between) as {provider: limit}."""
    limits: dict[str, int] = {}
    for item in text.replace(",", " ").split():
        provider, sep, value = item.partition("=")
        try:
            limit = int(value) if sep and provider.strip() else 0
        except ValueError:
            limit = 0
        if limit < 1:
            raise LimitsError(
                f"{source}: {item!r} is not PROVIDER=N with N >= 1; write e.g. "
                "'claude-code=2,anthropic=4'"
            )
        limits[provider.strip()] = limit
    return limits


def configured_limits(settings: Settings | None = None) -> dict[str, int]:
    """The limits this process was given (`use_limits`), else those the deployment set in
    EVALS_PIPELINE_PROVIDER_LIMITS of `settings` (default: this process's; none when unset)."""
    if settings is None and _given is not None:
        return dict(_given)
    return parse_limits((settings or Settings.current()).provider_limits or "")


_given: dict[str, int] | None = None


@contextmanager
def use_limits(limits: Mapping[str, int]) -> Iterator[None]:
    """This process's limits while the body runs (`run --limit` over the setting), instead of
    the setting's: how a command hands its limits to the steps it runs in this process."""
    global _given
    before, _given = _given, dict(limits)
    try:
        yield
    finally:
        _given = before


_registry: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_registry_lock = threading.Lock()


def provider_limit(provider: str) -> threading.BoundedSemaphore | None:
    """The process-wide limit of `provider` as configured now, or None when it has none."""
    limit = configured_limits().get(provider)
    if limit is None:
        return None
    with _registry_lock:
        # Keyed with the limit too: a changed setting gets its own count (tests change it).
        return _registry.setdefault((provider, limit), threading.BoundedSemaphore(limit))


@contextmanager
def provider_slot(provider: str) -> Iterator[None]:
    """Hold one of `provider`'s slots (waiting for one) while the body runs; free without a
    limit."""
    limit = provider_limit(provider)
    if limit is None:
        yield
        return
    with limit:
        yield


def agent_slot(target: TargetSpec) -> AbstractContextManager[None]:
    """The slot an agent run of `target` holds: its provider's. An LLM target's calls take
    their provider's slot one call at a time instead (llm/sdk.py), so none is held here."""
    if isinstance(target, LlmTarget):
        return nullcontext()
    return provider_slot(target.provider)
