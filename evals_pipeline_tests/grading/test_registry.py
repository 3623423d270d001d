"""The registry pairs each assertion spec with its evaluator, and the modules say so by name."""

from __future__ import annotations

from evals_pipeline.grading import evaluators
from evals_pipeline.models.assertions import ASSERTION_SPECS, CompositeAssertion, spec_types


def test_each_spec_module_is_named_like_its_evaluator_module() -> None:
    # models/assertions/text.py is judged by grading/assertions/text.py, code_grader.py by
    # grading/code_grader/, and so on; the composite sits beside the union it nests (spec.py),
    # its aggregators in composite.py.
    registered = evaluators()
    unpaired = []
    for spec in ASSERTION_SPECS:
        home = "composite" if spec is CompositeAssertion else spec.__module__.rsplit(".", 1)[1]
        function = registered[spec_types(spec)[0]]
        if home not in function.__module__.split("."):
            unpaired.append(f"{spec.__module__}.{spec.__name__} -> {function.__module__}")
    assert not unpaired, f"spec and evaluator modules named apart: {unpaired}"
