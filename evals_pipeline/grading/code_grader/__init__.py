"""Code graders: AgentV's stdin/stdout grader contract (`run`), the payload a grader reads
(`payload`) and the loopback proxy through which it may ask the grader target (`target_proxy`)."""

from evals_pipeline.grading.code_grader.payload import build_grader_payload
from evals_pipeline.grading.code_grader.run import run_code_grader
from evals_pipeline.grading.code_grader.target_proxy import TargetProxy

__all__ = ["TargetProxy", "build_grader_payload", "run_code_grader"]
