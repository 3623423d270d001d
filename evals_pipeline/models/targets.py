"""Targets: the agents a suite runs, as written in `.agentv/targets.yaml` or inline in a suite."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    workers: int | None = Field(default=None, ge=1, le=50)
    timeout_seconds: float | None = Field(default=None, gt=0)


class Healthcheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str]
    cwd: str | None = None
    timeout_seconds: float = Field(default=30, gt=0)


class CliTarget(TargetBase):
    """Any command, AgentV's `cli` provider contract ({PROMPT}, {PROMPT_FILE}, {OUTPUT_FILE}, ...)."""

    provider: Literal["cli"]
    command: str = Field(min_length=1)
    cwd: str | None = None
    files_format: str = "{path}"
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra variables passed to the command."
    )
    healthcheck: Healthcheck | None = None
    keep_temp_files: bool = False


class MockTarget(TargetBase):
    """A fixed response: checks suites and graders without running an agent."""

    provider: Literal["mock"]
    response: str = ""


class ReplayTarget(TargetBase):
    """Recorded sessions, one file per test id: grade existing sessions without running an agent."""

    provider: Literal["replay"]
    sessions_dir: str = Field(
        description="Folder with one `<test id>.json` (a cli output file) or `<test id>.jsonl` "
        "(one message per line) per test."
    )


TargetSpec = Annotated[CliTarget | MockTarget | ReplayTarget, Field(discriminator="provider")]

PROVIDERS: tuple[str, ...] = ("cli", "mock", "replay")


class TargetsFile(BaseModel):
    """`.agentv/targets.yaml`."""

    model_config = ConfigDict(extra="forbid")

    targets: list[TargetSpec]
