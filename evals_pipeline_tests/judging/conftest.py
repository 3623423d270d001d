"""The judging tests judge the same real cases and Parquet-backed sessions the grading tests grade."""

from evals_pipeline_tests.grading.conftest import make_case, make_session, scripted

__all__ = ["make_case", "make_session", "scripted"]
