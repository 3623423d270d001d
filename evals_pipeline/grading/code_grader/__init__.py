"""Code graders: AgentV's stdin/stdout grader contract (`run`), the payload a grader reads
(`payload`) and the loopback proxy through which it may ask the grader target (`target_proxy`)."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.grading.code_grader.payload import build_grader_payload
    from evals_pipeline.grading.code_grader.run import run_code_grader
    from evals_pipeline.grading.code_grader.target_proxy import TargetProxy

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "TargetProxy": "target_proxy",
    "build_grader_payload": "payload",
    "run_code_grader": "run",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "TargetProxy",
    "build_grader_payload",
    "run_code_grader",
]
