"""AgentV's `provider_batching: true` for `cli` targets: one run of the command for many tests.

The batch runner reads the eval file itself ({EVAL_FILE}) and writes one JSONL record per test,
keyed by `id`, to {OUTPUT_FILE}. Each record is routed to its test and written as that test's own
output file, so the enricher and the graders see exactly what a per-test `cli` run leaves. A test
without its record, or with two, is that test's error; a runner that crashes or times out is the
error of every test of the invocation, with its stderr.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.adapters.cli import (
    fill_placeholders,
    home_path,
    input_file_list,
    process_failure,
    remove_home,
    run_home,
)
from evals_pipeline.adapters.identity import agent_version
from evals_pipeline.adapters.sandboxing import run_sandbox
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import agent_error
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import CliTarget
from evals_pipeline.process import ProcessResult, child_env, run_process
from evals_pipeline.secrets import run_redactor

BATCH_FOLDER = ".batch"
"""The invocation's artifact folder beside the cases' ones; a dot is never in a case key."""

BATCH_EVAL_ID = "batch"
"""`{EVAL_ID}` of a batch invocation, as in AgentV."""

MESSAGE_KEYS = ("output", "output_messages")
BAD_LINES_SHOWN = 3


def is_batching(case: ResolvedCase) -> bool:
    """Whether the case's agent runs as part of a batch invocation."""
    return isinstance(case.target, CliTarget) and case.target.provider_batching


def batch_groups(cases: list[ResolvedCase]) -> list[list[ResolvedCase]]:
    """The batching cases grouped by invocation: one group per eval file and agent, in order."""
    groups: dict[tuple[str, str], list[ResolvedCase]] = {}
    for case in cases:
        if is_batching(case):
            groups.setdefault((case.suite_path, case.agent), []).append(case)
    return list(groups.values())


@dataclass
class BatchRecords:
    """The runner's JSONL output: records by id, ids seen more than once, lines that are not
    records (not JSON, not an object, no string id)."""

    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    duplicates: Counter[str] = field(default_factory=Counter)
    bad_lines: list[str] = field(default_factory=list)

    def describe_bad_lines(self) -> str:
        if not self.bad_lines:
            return ""
        shown = "; ".join(self.bad_lines[:BAD_LINES_SHOWN])
        more = len(self.bad_lines) - BAD_LINES_SHOWN
        return f"{len(self.bad_lines)} lines were not records ({shown}{f'; {more} more' if more > 0 else ''})"


def read_records(text: str) -> BatchRecords:
    """Parse JSONL records keyed by `id`; nothing raises: a bad line is noted, a repeated id
    counted, so every test still gets its own outcome."""
    records = BatchRecords()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            records.bad_lines.append(f"line {number}: not JSON: {exc.msg}")
            continue
        record_id = value.get("id") if isinstance(value, dict) else None
        if not isinstance(record_id, str) or not record_id:
            records.bad_lines.append(f"line {number}: not an object with a string 'id'")
            continue
        if record_id in records.by_id:
            records.duplicates[record_id] += 1
        records.by_id[record_id] = value
    return records


def output_document(record: dict[str, Any], fallback_duration_ms: int) -> dict[str, Any]:
    """One record as a per-test output file, with AgentV's batch rules where they differ from a
    single output file: a non-string `text` is JSON-encoded, an empty message list falls back to
    `text`, and a record without `duration_ms` gets the invocation's time divided by its tests."""
    doc = {key: value for key, value in record.items() if key != "id"}
    if "text" in doc and not isinstance(doc["text"], str):
        doc["text"] = json.dumps(doc["text"], ensure_ascii=False)
    for key in MESSAGE_KEYS:
        if doc.get(key) == []:
            del doc[key]
    if not any(key in doc for key in (*MESSAGE_KEYS, "text")):
        doc["text"] = ""
    if doc.get("duration_ms") is None:
        doc["duration_ms"] = fallback_duration_ms
    return doc


def batch_context(folder: Path, agent: str, trial: int) -> RunContext:
    """Where one invocation keeps its files: its command's stdout, prompt and JSONL output."""
    artifacts = folder / agent / BATCH_FOLDER / f"trial-{trial}"
    return RunContext(artifacts, artifacts, trial)


def batch_output_path(ctx: RunContext) -> Path:
    return ctx.artifacts / "output.jsonl"


def render_batch_command(cases: list[ResolvedCase], target: CliTarget, ctx: RunContext) -> str:
    """AgentV's batch values: an empty prompt, `EVAL_ID=batch`, every test's input files, the
    JSONL output path; ours add the eval file, its folder, and the trial as `{ATTEMPT}`."""
    first = cases[0]
    files = [path for case in cases for path in case.input_files]
    values = {
        "PROMPT": shlex.quote(""),
        "PROMPT_FILE": shlex.quote(str(ctx.prompt_path)),
        "OUTPUT_FILE": shlex.quote(str(batch_output_path(ctx))),
        "EVAL_ID": BATCH_EVAL_ID,
        "ATTEMPT": str(ctx.trial),
        "FILES": input_file_list(files, target.files_format),
        "EVAL_FILE": shlex.quote(first.suite_path),
        "EVAL_DIR": shlex.quote(first.base_dir),
        "WORKSPACE": shlex.quote(target.cwd or first.base_dir),
    }
    return fill_placeholders(target.command, values)


def run_batch(cases: list[tuple[ResolvedCase, RunContext]], ctx: RunContext) -> list[AgentRun]:
    """Run the batch (below), then record the runner's version and scrub secrets from its files
    and records, as run_agent does for a single run."""
    first = cases[0][0]
    runs = _run_batch(cases, ctx)
    version = agent_version(first.target, first.base_dir)
    redactor = run_redactor()
    redactor.tree(ctx.artifacts)
    for _, case_ctx in cases:
        redactor.tree(case_ctx.artifacts, skip=[case_ctx.workspace])
    return [redactor.model(run.model_copy(update={"agent_version": version})) for run in runs]


def _run_batch(cases: list[tuple[ResolvedCase, RunContext]], ctx: RunContext) -> list[AgentRun]:
    """Run the batch command once for `cases` (one agent, one eval file, one trial) and route
    its records: one AgentRun per case, in order.

    The runner may write records for tests outside `cases` (a partial backfill: it still reads
    the whole eval file); those are ignored. No workspace is prepared, as in AgentV 4.42.4,
    whose batch path skips workspace setup: the command runs in the target's `cwd`, else the
    eval file's folder.
    """
    first = cases[0][0]
    target = first.target
    assert isinstance(target, CliTarget)
    output = batch_output_path(ctx)
    result = _invoke_batch([case for case, _ in cases], target, ctx)
    warnings = []
    if any(case.workspace is not None for case, _ in cases):
        warnings.append(
            "the suite's workspace is not prepared for a batch invocation (as in AgentV): the "
            f"runner ran in {target.cwd or first.base_dir}"
        )

    def record(case: ResolvedCase, case_ctx: RunContext, **fields: Any) -> AgentRun:
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            stdout_path=str(ctx.stdout_path),
            stderr=result.stderr,
            exit_code=result.exit_code,
            start_ms=result.start_ms,
            end_ms=result.end_ms,
            timed_out=result.timed_out,
            warnings=warnings,
            **fields,
        )

    failure = process_failure(result, ctx.stdout_path, first.timeout_seconds)
    if failure is None and not output.is_file():
        missing = f"exited 0 but wrote no {{OUTPUT_FILE}} ({output})"
        failure = agent_error("parse", missing, result.stderr)
    if failure is not None:
        reason = f"batch runner {failure} (one invocation for {len(cases)} tests)"
        failed = failure.with_message(reason)
        return [record(case, case_ctx, error=failed) for case, case_ctx in cases]

    records = read_records(output.read_text(errors="replace"))
    share_ms = round((result.end_ms - result.start_ms) / len(cases))
    runs = []
    for case, case_ctx in cases:
        found = records.by_id.get(case.test_id)
        if found is None:
            bad = records.describe_bad_lines()
            reason = (
                f"batch output has no record with id {case.test_id!r} "
                f"({len(records.by_id)} records in {output}){'; ' + bad if bad else ''}"
            )
            runs.append(record(case, case_ctx, error=agent_error("parse", reason)))
        elif records.duplicates[case.test_id]:
            count = records.duplicates[case.test_id] + 1
            reason = (
                f"batch output has {count} records with id {case.test_id!r}: ids must be unique"
            )
            runs.append(record(case, case_ctx, error=agent_error("parse", reason)))
        else:
            case_ctx.artifacts.mkdir(parents=True, exist_ok=True)
            document = output_document(found, share_ms)
            case_ctx.output_path.write_text(json.dumps(document, ensure_ascii=False))
            runs.append(record(case, case_ctx, output_file_path=str(case_ctx.output_path)))
    return runs


def _invoke_batch(cases: list[ResolvedCase], target: CliTarget, ctx: RunContext) -> ProcessResult:
    """The batch command, run once for `cases` in the target's `cwd` (else the eval file's
    folder), with a home of its own that is removed afterwards."""
    first = cases[0]
    ctx.artifacts.mkdir(parents=True, exist_ok=True)
    ctx.prompt_path.write_text("")
    home = run_home(target, ctx.artifacts)
    try:
        cwd = Path(target.cwd or first.base_dir)
        return run_process(
            render_batch_command(cases, target, ctx),
            cwd=cwd,
            env=child_env({**home, **target.env, "EVAL_ID": BATCH_EVAL_ID}),
            timeout_seconds=first.timeout_seconds,
            stdout_path=ctx.stdout_path,
            sandbox=run_sandbox(target, first, ctx, home_path(home), runs_in=cwd),
        )
    finally:
        remove_home(home)
