"""The record a runner keeps of each live child process, so a later start can kill what a
runner that died left behind."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ChildRecord(BaseModel):
    """One child process a runner started and has not yet seen end."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = 1
    pid: int
    start_ticks: int = Field(description="Its start time from /proc/<pid>/stat: guards pid reuse.")
    token: str = Field(description="Its EVALS_PIPELINE_PROC value, inherited by its descendants.")
    owner: str = Field(description="The runner's opaque EVALS_PIPELINE_OWNER value.")
    command: str
    start_ms: int
