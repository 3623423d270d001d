"""A grader with a bug, on purpose: it reads a config key the suite never sets, crashes, and the
pipeline records an *error* with this traceback instead of a score."""

from evals_pipeline.grader import GraderInput, grader


@grader
def check(inp: GraderInput) -> float:
    limit = inp.config["max_words"]  # KeyError: the suite sets `max_word` (sic)
    return 1.0 if len((inp.output or "").split()) <= limit else 0.0
