"""`model-server`: the scripted model server in the foreground."""

from __future__ import annotations

import argparse
from pathlib import Path

from evals_pipeline.cli.exits import EXIT_OK, usage_error


def cmd_model_server(args: argparse.Namespace) -> int:
    from evals_pipeline.gc_pause import start_up_over
    from evals_pipeline.model_server import ScriptError, serve

    start_up_over()  # a server runs long: the collector works as usual
    try:
        serve(
            Path(args.script),
            host=args.host,
            port=args.port,
            log_path=Path(args.log) if args.log else None,
        )
    except ScriptError as exc:
        return usage_error(str(exc))
    except KeyboardInterrupt:
        pass
    return EXIT_OK
