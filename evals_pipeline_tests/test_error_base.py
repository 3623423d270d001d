"""Every exception class evals_pipeline defines derives from the one base, EvalsPipelineError
(issue 37, "Contracts"), so `except EvalsPipelineError` catches all of ours and nothing else.

Read with `ast` from every module's source: a class is an exception when one of its bases is a
builtin exception, a name ending in Error or Exception (Dagster's, click's), or a class found here
to be one; it passes when EvalsPipelineError is among its bases, directly or through ours."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import evals_pipeline
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.suites.errors import SuiteError

ROOT = Path(evals_pipeline.__file__).resolve().parent
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def class_bases() -> dict[str, tuple[str, list[str]]]:
    """Every class in the package: `module:Class` -> (class name, its bases' names)."""
    classes: dict[str, tuple[str, list[str]]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [b for b in map(_base_name, node.bases) if b]
                classes[f"{path.relative_to(ROOT)}:{node.name}"] = (node.name, bases)
    return classes


def _is_foreign_exception(base: str) -> bool:
    return base in BUILTIN_EXCEPTIONS or base.endswith(("Error", "Exception"))


def exception_classes(classes: dict[str, tuple[str, list[str]]]) -> dict[str, bool]:
    """`module:Class` of every exception class -> whether it derives from EvalsPipelineError."""
    ours = {name for name, _ in classes.values()}
    exceptions: set[str] = set()
    derives: set[str] = {"EvalsPipelineError"}
    changed = True
    while changed:  # to a fixed point: a subclass of one of ours may come before it
        changed = False
        for name, bases in classes.values():
            is_exc = any(
                b in exceptions or (b not in ours and _is_foreign_exception(b)) for b in bases
            )
            if is_exc and name not in exceptions:
                exceptions.add(name)
                changed = True
            if any(b in derives for b in bases) and name not in derives:
                derives.add(name)
                changed = True
    return {where: name in derives for where, (name, _) in classes.items() if name in exceptions}


def test_every_exception_class_derives_from_the_one_base() -> None:
    found = exception_classes(class_bases())
    # The walk finds the classes it must (a check that finds nothing passes for nothing).
    assert "suites/errors.py:SuiteError" in found
    assert "defs/partitions.py:UnregisteredPartitionError" in found
    assert len(found) >= 30
    stray = sorted(where for where, ok in found.items() if not ok)
    assert not stray, f"exception classes not deriving from EvalsPipelineError: {stray}"


def test_a_project_error_is_caught_by_the_base_and_by_its_old_base() -> None:
    from evals_pipeline.file_modes import UmaskSettingError
    from evals_pipeline.workspaces.template import TemplateLinkError

    assert issubclass(SuiteError, EvalsPipelineError)
    assert issubclass(UmaskSettingError, ValueError)
    assert issubclass(UmaskSettingError, EvalsPipelineError)
    error = TemplateLinkError(2, "no such file")
    assert isinstance(error, OSError) and isinstance(error, EvalsPipelineError)
    assert error.errno == 2
