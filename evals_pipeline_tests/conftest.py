"""Fixtures every test folder can use: the real servers of servers.py (started on request), and
a spy on the sessions step's own enrichments."""

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from evals_pipeline.instance.event_volume import SETTINGS
from evals_pipeline.settings import Settings
from evals_pipeline_tests.conformance import corpus_outcomes

pytest_plugins = ["evals_pipeline_tests.servers", "evals_pipeline_tests.executor_passes"]


@pytest.fixture(autouse=True)
def _sigint_default() -> None:
    """Each test starts with Python's own SIGINT handler. A SIGINT a library left ignored would
    be inherited by every child, and the tests that stop a child with Ctrl-C (the model server,
    `dagster dev`) rely on it reaching them."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _settings_read_in_the_test() -> None:
    """Each test's process settings are read at their first use in the test (Settings.current),
    from the environment the test has set by then, not from an earlier test's. A test that
    changes a variable after that use calls Settings.reload()."""
    Settings.forget()


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """Each test leaves the worker's environment as it found it. Loading a suite fills what its
    `.env` files set and the shell did not (as AgentV does), in this process: a later test of the
    worker would see those values, as secrets to scrub among them."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(autouse=True)
def _umask() -> Iterator[None]:
    """Each test starts with the worker's own umask. A test that runs the command in-process
    leaves its umask (077, file_modes.py) behind, and folders a later test makes itself would be
    private where that test expects its own umask's modes."""
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


@pytest.fixture(autouse=True)
def _dagster_event_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the event-log switches `evals-pipeline` sets in its own process
    (instance/event_volume.py): a test that runs the command in-process would otherwise leave them
    on for every later test of its worker."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controlling process, once
        corpus_outcomes.open_session(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: each worker writes the corpus test's outcomes where the summary reads them."""
    corpus_outcomes.hand_to_worker(node.config, node.workerinput)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """The AgentV corpus test's counts (test_agentv_corpus.py), when it ran."""
    lines = corpus_outcomes.close_session(config)
    if lines:
        terminalreporter.section("AgentV corpus")
        for line in lines:
            terminalreporter.write_line(line)
