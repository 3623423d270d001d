"""A grader that crashes: a traceback on stderr, exit 1."""

raise RuntimeError("the rubric file is missing")
