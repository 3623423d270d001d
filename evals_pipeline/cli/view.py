"""`view`: the runs, reports and comparisons of the storage root in a browser, until Ctrl-C."""

from __future__ import annotations

import argparse

from evals_pipeline.cli.exits import EXIT_OK, usage_error
from evals_pipeline.cli.locations import storage_url


def cmd_view(args: argparse.Namespace) -> int:
    from evals_pipeline.gc_pause import start_up_over
    from evals_pipeline.served import listening_socket
    from evals_pipeline.storage.root import open_root
    from evals_pipeline.view.app import view_app
    from evals_pipeline.view.server import serve

    start_up_over()  # a server runs long: the collector works as usual
    root = open_root(storage_url(args))
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        return usage_error(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); give another "
            "--port (0: any free one) or --host"
        )

    def announce(url: str) -> None:
        print(f"evals-pipeline view: {root.url} at {url}/ (Ctrl-C to stop)", flush=True)

    serve(view_app(root), sock, announce)
    return EXIT_OK
