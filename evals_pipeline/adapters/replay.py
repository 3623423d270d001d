"""The `replay` provider: grade a recorded session instead of running an agent.

Three sources: our folder of sessions (one file per test id), AgentV's replay fixtures (the
JSONL `agentv eval --record-replay` writes), or AgentV's execution traces (adapters/
execution_traces.py); fixtures and traces are looked up as AgentV looks them up.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.adapters.execution_traces import TraceError, read_traces, replayed_output
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import ErrorKind, RecordError, agent_error
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


FIXTURE_SCHEMA = "agentv.replay_fixture.v1"


class FixtureError(ValueError, EvalsPipelineError):
    """A fixtures file that cannot be read, or a lookup with no single matching record. `kind`
    types the run's error: setup when this test has no recording, parse when it cannot be read
    as one."""

    def __init__(self, message: str, kind: ErrorKind = "parse") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


def read_fixtures(path: Path) -> list[dict[str, Any]]:
    """The records of an AgentV replay fixtures file; FixtureError names the bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise FixtureError(f"replay fixture file not readable: {path}: {exc}", "setup") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FixtureError(f"invalid replay fixture JSONL at {path}:{number}: {exc}") from None
        missing = [
            key
            for key in ("suite", "test_id", "source_target", "output")
            if not isinstance(record, dict) or key not in record
        ]
        if missing or record.get("schema_version") != FIXTURE_SCHEMA:
            problem = f"missing {', '.join(missing)}" if missing else "schema_version is not "
            raise FixtureError(
                f"invalid replay fixture record at {path}:{number}: "
                + (problem if missing else problem + FIXTURE_SCHEMA)
            )
        records.append(record)
    return records


def find_fixture(
    records: list[dict[str, Any]],
    target: ReplayTarget,
    case: ResolvedCase,
    suite_name: str,
    *,
    what: str = "replay fixture",
) -> dict[str, Any]:
    """The one record for this test, by AgentV's identity (suite or eval path, test id, source
    target, attempt 0, variant); FixtureError when none or several match. `what` names the
    source in that error (AgentV's words: "replay fixture", "Execution trace replay")."""
    suite = target.suite or suite_name
    eval_path = target.eval_path or case.suite_path

    def matches(record: dict[str, Any]) -> bool:
        if suite and record.get("suite") != suite:
            return False
        recorded_path = record.get("eval_path")
        if recorded_path and not _same_eval_path(recorded_path, eval_path):
            return False
        return (
            record.get("test_id") == case.test_id
            and record.get("source_target") == target.source_target
            and (record.get("attempt") or 0) == 0
            and record.get("variant") == target.variant
        )

    found = [record for record in records if matches(record)]
    if len(found) == 1:
        return found[0]
    key = (
        f"suite={suite} eval_path={eval_path} test_id={case.test_id} "
        f"source_target={target.source_target} attempt=0 variant={target.variant or '<none>'}"
    )
    if not found:
        raise FixtureError(f"{what} lookup found no record for {key}", "setup")
    raise FixtureError(f"{what} lookup found {len(found)} duplicate records for {key}")


def _same_eval_path(recorded: str, lookup: str) -> bool:
    def normal(value: str) -> str:
        value = value.replace("\\", "/")
        value = value.removeprefix("./")
        while "//" in value:
            value = value.replace("//", "/")
        return value

    record, wanted = normal(recorded), normal(lookup)
    return record == wanted or (Path(lookup).is_absolute() and wanted.endswith(f"/{record}"))


def fixture_output(record: dict[str, Any]) -> dict[str, Any]:
    """The record as a cli output file: messages, usage, cost and duration."""
    keys = ("output", "token_usage", "cost_usd", "duration_ms", "start_time", "end_time")
    return {key: record[key] for key in keys if key in record}


class ReplayAdapter:
    def __init__(self, stream_kind: Callable[[str], str | None]) -> None:
        # Which agent CLI wrote a recorded stream: the registry's, as it knows every agent.
        self.stream_kind = stream_kind

    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        assert isinstance(case.target, ReplayTarget)
        if case.target.fixtures is not None or case.target.execution_traces is not None:
            return self._from_fixtures(case, ctx)
        start = now_ms()
        assert case.target.sessions_dir is not None
        sessions_dir = Path(case.target.sessions_dir)
        recording = recording_for(sessions_dir, case.test_id)
        error = None
        if recording is None:
            names = " or ".join(f"{case.test_id}{s}" for s in RECORDING_SUFFIXES)
            missing = (
                f"no recorded session for test {case.test_id!r}: expected {names} in {sessions_dir}"
            )
            error = agent_error("setup", missing)
        # A session file of a real agent CLI (imported with `evals-pipeline import`) is enriched
        # like a live run of that CLI; anything else is AgentV's cli output contract.
        stream_kind = None
        if recording is not None and recording.suffix == ".jsonl":
            with recording.open(errors="replace") as handle:
                stream_kind = self.stream_kind("".join(handle.readline() for _ in range(20)))
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

    def _from_fixtures(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        """A fixture's or an execution trace's output, or the lookup's error as the run's."""
        target = case.target
        assert isinstance(target, ReplayTarget)
        start = now_ms()
        error: RecordError | None = None
        try:
            ctx.output_path.write_text(json.dumps(_recorded_output(target, case), indent=2))
        except (FixtureError, TraceError) as exc:
            error = agent_error(_replay_kind(target, exc), str(exc))
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            output_file_path=None if error else str(ctx.output_path),
            exit_code=None if error else 0,
            start_ms=start,
            end_ms=now_ms(),
            error=error,
            workspace_path=str(ctx.workspace),
        )


def _replay_kind(target: ReplayTarget, exc: FixtureError | TraceError) -> ErrorKind:
    """setup when the test has no recording (no file, no record for it), parse when the file is
    there but cannot be read as one (bad JSON, a wrong schema, duplicate records)."""
    source = target.fixtures or target.execution_traces
    if source is None or not Path(source).is_file():
        return "setup"
    return exc.kind if isinstance(exc, FixtureError) else "parse"


def _recorded_output(target: ReplayTarget, case: ResolvedCase) -> dict[str, Any]:
    """The cli output file of this test from the target's fixtures or execution traces."""
    if target.fixtures is not None:
        records = read_fixtures(Path(target.fixtures))
        return fixture_output(find_fixture(records, target, case, case.suite_name))
    assert target.execution_traces is not None
    path = Path(target.execution_traces)
    envelopes = read_traces(path)
    identities = [
        {**envelope.identity(), "index": index} for index, (envelope, _) in enumerate(envelopes)
    ]
    found = find_fixture(identities, target, case, case.suite_name, what="Execution trace replay")
    envelope, line = envelopes[found["index"]]
    return replayed_output(envelope, f"{path}:{line}" if line is not None else str(path))
