"""The enricher's cost per 10 MB agent stream: a captured claude, codex or pi stream repeated to
10 MB, made into a stored session (events and messages Parquet) by the real enricher, in a
fresh process per stream: its CPU time, and its peak RSS over what the process held before.

    python -m benchmarks.stream_session [--mb 10] [kind ...]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "evals_pipeline_tests/fixtures/transcripts"
STREAMS = {
    "claude-code": ("claude.multi_parallel_and_failing_tool.jsonl", None),
    "codex": ("codex.multi_parallel_and_failing_tool.jsonl", "codex.rollout.jsonl"),
    "pi-agent": ("pi.multi_parallel_and_failing_tool.jsonl", None),
}


def _repeated(source: Path, target: Path, size: int) -> Path:
    """`source` written over and over into `target` until it holds `size` bytes."""
    data = source.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    with target.open("wb") as out:
        for _ in range(max(1, size // len(data))):
            out.write(data)
    return target


def measure(kind: str, folder: Path, size: int) -> dict[str, float]:
    """Enrich one `size`-byte stream of `kind` in this process: CPU seconds and MB of peak RSS."""
    from evals_pipeline.enrichers.session import enrich_run
    from evals_pipeline.models.run import AgentRun

    stream_name, rollout_name = STREAMS[kind]
    side: dict[str, str] = {}
    if rollout_name:  # codex: its rollout file is the transcript, the exec stream a summary
        side["rollout"] = str(_repeated(FIXTURES / rollout_name, folder / "rollout.jsonl", size))
        size = 0
    stdout = _repeated(FIXTURES / stream_name, folder / "stdout.jsonl", size)
    run = AgentRun(
        case_key="bench",
        agent=kind,
        stdout_path=str(stdout),
        start_ms=0,
        end_ms=1,
        stream_kind=kind,
        side_files=side,
    )
    # Warm: imports and first-use costs are the process's, not the session's.
    small = run.model_copy(update={"stdout_path": str(FIXTURES / stream_name), "side_files": {}})
    enrich_run(small, folder / "warm")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = time.process_time()
    session = enrich_run(run, folder / "session")
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "stream_mb": sum(Path(p).stat().st_size for p in [str(stdout), *side.values()]) / 2**20,
        "cpu_s": round(cpu, 3),
        "peak_rss_mb": round(peak / 1024, 1),
        "rss_growth_mb": round((peak - before) / 1024, 1),
        "messages": session.message_count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", default=list(STREAMS))
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    size = int(args.mb * 2**20)
    if args.child:
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(measure(args.kinds[0], Path(folder), size)))
        return
    for kind in args.kinds:
        command = [sys.executable, "-m", "benchmarks.stream_session", "--child", "--mb"]
        done = subprocess.run([*command, str(args.mb), kind], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stderr)
        print(kind, done.stdout.strip())


if __name__ == "__main__":
    main()
