"""The real agent CLIs for tests: found where `make agents` installs them, or skipped with the
reason (pytest's -ra prints it). With EVALS_PIPELINE_REQUIRE_AGENTS=1 (CI) a missing CLI fails."""

from __future__ import annotations

import os

import pytest

from evals_pipeline.adapters.agent_cli import installed_executable

AGENT_BINARIES = {"claude-code": "claude", "codex": "codex", "pi-agent": "pi"}


def require_agent(kind: str) -> str:
    """The executable of agent `kind`, or skip (fail in CI) when it is not installed."""
    binary = AGENT_BINARIES[kind]
    found = installed_executable(binary)
    if found:
        return found
    reason = f"{binary} is not installed: run `make agents` (needs node and npm)"
    if os.environ.get("EVALS_PIPELINE_REQUIRE_AGENTS") == "1":
        pytest.fail(f"{reason}; EVALS_PIPELINE_REQUIRE_AGENTS=1 forbids skipping")
    pytest.skip(reason)
