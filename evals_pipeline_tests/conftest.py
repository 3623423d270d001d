"""Fixtures every test folder can use: the real servers of servers.py (started on request)."""

import signal

import pytest

from evals_pipeline.defs.event_volume import SETTINGS

pytest_plugins = ["evals_pipeline_tests.servers"]


@pytest.fixture(autouse=True)
def _sigint_default() -> None:
    """Each test starts with Python's own SIGINT handler. A SIGINT a library left ignored would
    be inherited by every child, and the tests that stop a child with Ctrl-C (the model server,
    `dagster dev`) rely on it reaching them."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _dagster_event_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the event-log switches `evals-pipeline` sets in its own process
    (defs/event_volume.py): a test that runs the command in-process would otherwise leave them
    on for every later test of its worker."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
