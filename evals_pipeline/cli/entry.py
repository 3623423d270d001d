"""The `evals-pipeline` entry point: process settings first (umask, event log, GC pause), then
the command the arguments name."""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.cli.exits import usage_error
from evals_pipeline.cli.parser import build_parser
from evals_pipeline.file_modes import UmaskSettingError, apply_umask
from evals_pipeline.gc_pause import freeze_at_exit, start_up_paused
from evals_pipeline.instance.event_volume import lean_event_log
from evals_pipeline.settings import Settings


def main(argv: Sequence[str] | None = None) -> int:
    freeze_at_exit()
    lean_event_log()
    settings = Settings.from_env()  # read once; commands take it from `args.settings`
    try:  # what the runner writes is private unless EVALS_PIPELINE_UMASK says (file_modes.py)
        apply_umask(settings)
    except UmaskSettingError as exc:
        return usage_error(str(exc))
    args = build_parser().parse_args(argv)
    args.settings = settings
    # Commands that work long end the pause where their work starts (start_up_over); helpers
    # deep in a command take the same settings (Settings.current).
    with start_up_paused(), settings.use():
        return int(args.func(args))
