"""The `evals-pipeline` command: run, estimate, runs, compare, validate, schema, register, import,
assert, model-server; one module per command (or pair of commands), wired in `parser.py`."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.cli.entry import main
    from evals_pipeline.cli.parser import build_parser

# Loaded on first use: the command modules import their siblings, which would loop back through
# an `__init__` that imported the parser (and with it every command) eagerly.
_MODULES = {"build_parser": "parser", "main": "entry"}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = ["build_parser", "main"]
