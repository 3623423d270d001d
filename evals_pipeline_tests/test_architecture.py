"""Import and size contracts of evals_pipeline (issue 37, "Contracts"), checked on static source.

The graph is read with `ast` from every module's source, nothing is imported. A package's
`__init__` is a module of its own, named as the package, and importing `pkg.sub` (or
`from pkg.sub import name`) imports `pkg` too, so a cycle through an `__init__` that imports its
submodules eagerly is a cycle here, as it is at runtime. `from pkg import name` imports the
submodule `pkg.name` when one exists, else only `pkg`.

No function (def or async def) in evals_pipeline/ or its tests spans more than 80 lines, counted
from `def` to its last line with `ast`; a function holding a nested one counts its whole span.

Imports under `if TYPE_CHECKING:` are left out: they never run, so they make no runtime cycle.
Imports inside functions count: they run on first call and only hide a cycle, they do not break it.
A package `__getattr__` that loads submodules by name on first use (evals_pipeline.lazy_exports) is
not a static import and is not counted; such a package's `__init__` imports nothing eagerly.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import evals_pipeline

ROOT = Path(evals_pipeline.__file__).resolve().parent
TESTS_ROOT = Path(__file__).resolve().parent
MAX_FUNCTION_LINES = 80
PACKAGE = "evals_pipeline"
MODELS = f"{PACKAGE}.models"


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name; a package's `__init__.py` under the package's
    own name."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((package, *parts))] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anywhere in the module, functions included, except
    the body of `if TYPE_CHECKING:` (its `else:` runs, so it counts)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _runtime_imports(ast.Module(body=[child], type_ignores=[]))
        else:
            yield from _runtime_imports(node)


def _with_parents(name: str) -> Iterator[str]:
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        yield ".".join(parts[:end])


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of `known` that module `name` imports at runtime, parent packages included
    (even the importer's own: `pkg.a` importing `pkg.b` goes through `pkg`, so an `__init__` that
    imports its submodules eagerly closes a loop with each of them that imports a sibling)."""
    is_package = path.name == "__init__.py"
    imported: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [source, *(f"{source}.{alias.name}" for alias in node.names)]
        for target in targets:
            imported.update(parent for parent in _with_parents(target) if parent in known)
    imported.discard(name)
    return imported


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep graph cannot hit the recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _cycle_path(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """One closed walk through the component from its first member, for the failure message."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    walk = [node]
                    while walk[-1] != start:
                        walk.append(previous[walk[-1]])
                    return [*reversed(walk), start]
                if nxt not in previous:
                    previous[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return component


def test_the_graph_sees_package_inits_relative_imports_and_function_local_imports(
    tmp_path: Path,
) -> None:
    """The checker itself: each rule above finds the cycle it is meant to find."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .inner import thing\n")
    (pkg / "sub" / "inner.py").write_text("def f():\n    from pkg.other import x\n")
    (pkg / "other.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from pkg.sub.deep import y\n"
        "if TYPE_CHECKING:\n    from pkg.leaf import z\n"
    )
    (pkg / "sub" / "deep.py").write_text("")
    (pkg / "leaf.py").write_text("from pkg import other\n")
    modules = module_files(pkg, "pkg")
    graph = import_graph(modules)
    assert graph["pkg.sub"] == {"pkg", "pkg.sub.inner"}
    assert graph["pkg.other"] == {"pkg", "pkg.sub", "pkg.sub.deep"}
    assert graph["pkg.leaf"] == {"pkg", "pkg.other"}
    assert cycles(graph) == [["pkg.other", "pkg.sub", "pkg.sub.inner"]]


def test_no_import_cycles() -> None:
    graph = import_graph(module_files())
    found = cycles(graph)
    assert not found, (
        "import cycles (each a strongly connected component, with one loop in it):\n"
        + (
            "\n".join(
                f"- {len(component)} modules: {', '.join(component)}\n"
                f"    loop: {' -> '.join(_cycle_path(component, graph))}"
                for component in found
            )
        )
    )


def test_models_import_only_models() -> None:
    modules = module_files()
    graph = import_graph(modules)
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name == MODELS or name.startswith(f"{MODELS}.")
        for target in targets
        if target != PACKAGE and target != MODELS and not target.startswith(f"{MODELS}.")
    )
    assert not wrong, "models/ must import only models/:\n" + "\n".join(wrong)


def long_functions(
    roots: list[Path], limit: int = MAX_FUNCTION_LINES
) -> dict[tuple[str, str], int]:
    """Every function over `limit` lines under `roots`, by (path from the roots' parent, name), with
    its span: `def` (decorators left out) to its last line, nested functions inside it included."""
    found: dict[tuple[str, str], int] = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    span = (node.end_lineno or node.lineno) - node.lineno + 1
                    if span > limit:
                        name = path.relative_to(root.parent).as_posix()
                        found[(name, node.name)] = span
    return found


def test_the_length_check_counts_nested_functions_in_their_enclosing_span(tmp_path: Path) -> None:
    """The checker itself: a short outer function holding a long nested one is long too."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "".join(f"        x{i} = {i}\n" for i in range(4))
    (pkg / "m.py").write_text(
        "def outer():\n    async def inner():\n" + body + "    return inner\n"
        "def short():\n    return 1\n"
    )
    assert long_functions([pkg], limit=4) == {("pkg/m.py", "outer"): 7, ("pkg/m.py", "inner"): 5}


def test_no_function_over_80_lines() -> None:
    found = long_functions([ROOT, TESTS_ROOT])
    wrong = sorted(f"{path}: {name} is {span} lines" for (path, name), span in found.items())
    assert not wrong, f"functions over {MAX_FUNCTION_LINES} lines; split them:\n" + "\n".join(wrong)
