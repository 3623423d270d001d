"""The one base of every exception this package raises, so a caller can catch all of ours (and
only ours) with one clause. Each subclass keeps the builtin base its callers already catch
(ValueError, OSError, ImportError, ...) beside this one."""

from __future__ import annotations


class EvalsPipelineError(Exception):
    """An error raised by evals_pipeline itself, as opposed to a library or the interpreter."""
