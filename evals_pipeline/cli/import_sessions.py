"""`import`: recorded agent CLI sessions made into files a replay target grades."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals_pipeline.cli.exits import EXIT_OK, usage_error


def cmd_import(args: argparse.Namespace) -> int:
    from evals_pipeline.agents.registry import STREAMS, detect_stream_kind, parse_stream
    from evals_pipeline.secrets import Redactor, secret_values

    files = [Path(f) for f in args.files]
    if args.test_id and len(files) > 1:
        return usage_error("--test-id names one session; import several files without it")
    into = Path(args.into)
    into.mkdir(parents=True, exist_ok=True)
    redactor = Redactor(secret_values())
    for path in files:
        if not path.is_file():
            return usage_error(f"{path}: no such file")
        text = path.read_text(errors="replace")
        kind = detect_stream_kind(text)
        if kind is None:
            return usage_error(
                f"{path}: not a {_either(list(STREAMS))} session (JSONL stream or session "
                "file); an AgentV output file can be used by a replay target as it is"
            )
        test_id = args.test_id or path.name.removesuffix(".jsonl").removesuffix(".json")
        destination = into / f"{test_id}.jsonl"
        destination.write_text(redactor.text(text))
        session = parse_stream(kind, text)
        tools = ", ".join(session.tool_sequence()) or "no tools"
        usage = session.token_usage
        tokens = f"{usage.total} tokens" if usage else "no token counts"
        print(
            f"{path} -> {destination}: {kind} session {session.session_id or '?'}, "
            f"model {session.model or '?'}, {len(session.tool_sequence())} tool calls ({tools}), "
            f"{tokens}"
        )
        for warning in session.parse_warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    print(
        f"\ngrade them with a replay target: {{name: imported, provider: replay, "
        f"sessions_dir: {into}}}, then `evals-pipeline run SUITE --target imported`"
    )
    return EXIT_OK


def _either(kinds: list[str]) -> str:
    """`a, b or c`: the agent kinds whose streams `import` reads, the installed ones included."""
    return " or ".join(filter(None, [", ".join(kinds[:-1]), kinds[-1]]))
