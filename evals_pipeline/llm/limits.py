"""How many calls one process has in flight to each provider endpoint.

A Dagster pool limits concurrent steps, not HTTP calls: one judge step can fan out over many
threads. Clients of the same (provider, base_url) share one limit in the process, so the
targets' `max_concurrency` holds however the calls are spread over steps and threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CallLimit:
    """A counting limit on calls in flight, like a BoundedSemaphore whose size can only shrink.

    Targets sharing an endpoint may ask for different limits; the strictest one holds.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a call limit must be at least 1, got {limit}")
        self._limit = limit
        self._in_flight = 0
        self._peak = 0
        self._changed = threading.Condition()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def peak(self) -> int:
        """The most calls that were ever in flight at once (for tests and diagnostics)."""
        return self._peak

    def tighten(self, limit: int) -> None:
        """Lower the limit to `limit` if that is stricter; calls already in flight finish."""
        with self._changed:
            self._limit = min(self._limit, max(1, limit))

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the limit's slots for the duration of a call, waiting for one if needed."""
        with self._changed:
            self._changed.wait_for(lambda: self._in_flight < self._limit)
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
        try:
            yield
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify()


_registry: dict[tuple[str, str], CallLimit] = {}
_registry_lock = threading.Lock()


def call_limit(provider: str, base_url: str | None, max_concurrency: int) -> CallLimit:
    """The process-wide limit for a (provider, base_url) endpoint, at most `max_concurrency`.

    `base_url` None means the provider's own API.
    """
    key = (provider, (base_url or "").rstrip("/"))
    with _registry_lock:
        limit = _registry.get(key)
        if limit is None:
            limit = _registry[key] = CallLimit(max_concurrency)
        else:
            limit.tighten(max_concurrency)
        return limit
