"""The `replay` provider: grade a recorded session instead of running an agent."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.enrichers.streams import detect_stream_kind
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import ReplayTarget
from evals_pipeline.process import now_ms

RECORDING_SUFFIXES = (".json", ".jsonl")


def recording_for(sessions_dir: Path, test_id: str) -> Path | None:
    """The recorded session file of `test_id`, if there is one."""
    for suffix in RECORDING_SUFFIXES:
        candidate = sessions_dir / f"{test_id}{suffix}"
        if candidate.is_file():
            return candidate
    return None


class ReplayAdapter:
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        assert isinstance(case.target, ReplayTarget)
        start = now_ms()
        sessions_dir = Path(case.target.sessions_dir)
        recording = recording_for(sessions_dir, case.test_id)
        error = None
        if recording is None:
            names = " or ".join(f"{case.test_id}{s}" for s in RECORDING_SUFFIXES)
            error = (
                f"no recorded session for test {case.test_id!r}: expected {names} in {sessions_dir}"
            )
        # A session file of a real agent CLI (imported with `evals-pipeline import`) is enriched
        # like a live run of that CLI; anything else is AgentV's cli output contract.
        stream_kind = None
        if recording is not None and recording.suffix == ".jsonl":
            with recording.open(errors="replace") as handle:
                stream_kind = detect_stream_kind("".join(handle.readline() for _ in range(20)))
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            stdout_path=str(recording) if stream_kind else None,
            stream_kind=stream_kind,
            output_file_path=str(recording) if recording and not stream_kind else None,
            exit_code=0 if recording else None,
            start_ms=start,
            end_ms=now_ms(),
            error=error,
            workspace_path=str(ctx.workspace),
        )
