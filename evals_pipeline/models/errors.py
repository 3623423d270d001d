"""The error a record keeps when its step failed: which stage, what kind of failure, the message
people read, and the end of the process's stderr. Every surface that shows an error (report, CLI
lines, JUnit, Dagster metadata) shows `message`, as it showed the plain string records held before.

Records written before this model held the message alone; `upgraded` reads such a string into a
RecordError, taking stage and kind from what the record itself says (timed out, exit code, ...)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

ErrorStage = Literal["setup", "agent", "enrich", "grade", "judge", "report"]
"""The step whose work failed: preparing the workspace, the agent's run, reading its output into a
session, a grader, a judge, the report."""

ErrorKind = Literal[
    "timeout", "exit_code", "crashed", "refused", "setup", "parse", "provider", "no_score", "failed"
]
"""timeout: killed at its time limit. exit_code: the process exited non-zero. crashed: its
process could not be launched (a program missing when it ran) or died without an exit code (a
signal). refused: not started (an unhealthy target, a failed dependency, the budget), or turned
away as asked (a stop, the target proxy's limit, a model API's 4xx that no retry changes: auth,
permission, a bad request). setup: its inputs or workspace could not be prepared (a missing
recording, an unusable model script or key). parse: its output could not be read (no output
file, no record). provider: the model API reported an error (5xx, rate limit after retries, no
connection). no_score: a grader ended without a score. failed: a failure whose cause the record
does not say (an old record's grader error)."""

STDERR_TAIL_CHARS = 2000


def stderr_tail(stderr: str | None, limit: int = STDERR_TAIL_CHARS) -> str:
    """The last `limit` characters of a process's stderr: where a crash says why."""
    return (stderr or "")[-limit:]


class RecordError(BaseModel):
    """Why a record's step failed. `str()` is the message, the text every surface shows."""

    model_config = ConfigDict(frozen=True)

    stage: ErrorStage
    kind: ErrorKind
    message: str
    stderr_tail: str = ""

    def __str__(self) -> str:
        return self.message

    def with_message(self, message: str) -> RecordError:
        """The same error said differently (a longer reason, a redacted one)."""
        return self.model_copy(update={"message": message})


def agent_error(kind: ErrorKind, message: str, stderr: str | None = None) -> RecordError:
    """The error of an agent run (stage `agent`), with the end of its process's stderr."""
    return RecordError(stage="agent", kind=kind, message=message, stderr_tail=stderr_tail(stderr))


def upgraded(value: Any, *, stage: ErrorStage, kind: ErrorKind, stderr: str | None = None) -> Any:
    """`value` as a record's `error` field takes it: a plain string (a record written before
    RecordError, or a caller that knows only the message) becomes a RecordError of `stage` and
    `kind`; anything else (None, a RecordError, its dict) is left to validation."""
    if isinstance(value, str):
        return RecordError(stage=stage, kind=kind, message=value, stderr_tail=stderr_tail(stderr))
    return value


def message_of(error: RecordError | None) -> str | None:
    """The text a surface shows for a record's error, None when there is none."""
    return None if error is None else error.message
