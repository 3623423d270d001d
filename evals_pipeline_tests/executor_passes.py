"""The suite's executor passes: `pytest --executor multiprocess|celery evals_pipeline_tests`
(the folder named: pytest reads this plugin's options only then), or
EVALS_PIPELINE_TEST_EXECUTOR, runs the tests that run the Dagster graph, and only those, with
EVALS_PIPELINE_EXECUTOR set for the whole session, so every `evals-pipeline run`, `run_suite` and
code-location run of a test runs its steps on that executor. For celery the session starts a real
Redis and two celery workers (servers.py); each run's settings reach the workers with the run
(defs/suite_run.py), not through the workers' environment.

A test runs the graph when its code reaches an entry point that honours the executor (the
`graph` marker, applied here at collection): the test function, its fixtures and the helpers of
evals_pipeline_tests they name, read as source. `dg.materialize` and `execute_in_process` always
run in-process, so they do not count. A graph test that cannot hold on an executor by design
says so: `@pytest.mark.not_on("celery", reason=...)` (a celery worker is a process of its own,
with its own environment, that a killed command does not take down).
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evals_pipeline.defs.executor import BROKER_ENV, EXECUTOR_ENV, EXECUTORS
from evals_pipeline_tests.servers import running_celery_worker, running_redis

OPTION = "--executor"
ENV = "EVALS_PIPELINE_TEST_EXECUTOR"
SET_OPTION = "--graph-tests"
CELERY_WORKERS = ("worker-a", "worker-b")
# The graph tests `make test` runs on each executor (`--graph-tests ci`): the whole graph set
# (~360 tests) takes ~2.3x as long on multiprocess as in-process, far over the ~9 min both passes
# have in CI's ~30 (2 cores). These cover each kind of run at a fraction of the cost: the graph
# and a re-run partition, the case pipeline and its subsets, reuse and resume, the code location
# as a component, judging, Arrow sessions, agent identity, the partition advice.
CI_SET = tuple(
    f"evals_pipeline_tests/{module}"
    for module in (
        "defs/test_graph.py",
        "defs/test_case_pipeline.py",
        "defs/test_suite_component.py",
        "defs/test_unregistered_partition.py",
        "history/test_estimate_reuse.py",
        "judging/test_judges_agree_with_graders.py",
        "enrichers/test_arrow_output.py",
        "adapters/test_identity.py",
        "test_resume.py",
        "test_celery_settings.py",
    )
)

# Where a test's code starts a Dagster run on the executor EVALS_PIPELINE_EXECUTOR names: the
# CLI's `run` (in a child or through `main`), `run_suite`, the code location's jobs
# (`dagster asset materialize`, `dagster dev`, the daemon), and a launched run.
ENTRY_POINTS = re.compile(
    r"""["']run["']\s*[,\]\)]|\brun_suite\(|["']materialize["']|\bdagster_dev\b|"""
    r"""\blaunch_run\(|\bsubmit_run\("""
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        choices=EXECUTORS,
        default=os.environ.get(ENV) or "in_process",
        help="run only the tests that run the Dagster graph, on this executor "
        f"(default: ${ENV}, else in_process: every test, as configured)",
    )
    parser.addoption(
        SET_OPTION,
        choices=("all", "ci"),
        default="all",
        help="with --executor: every graph test, or the CI set (CI_SET: what fits make test's "
        "time budget)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "graph: runs Dagster steps on the executor under test (applied by collection)"
    )
    config.addinivalue_line(
        "markers",
        "not_on(*executors, reason): a graph test that does not hold on these executors, and why",
    )


def executor_under_test(config: pytest.Config) -> str:
    return str(config.getoption(OPTION))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the graph tests; on another executor than in-process, keep only them."""
    reader = _SourceReader()
    for item in items:
        if isinstance(item, pytest.Function) and reader.runs_graph(item):
            item.add_marker(pytest.mark.graph)
    if executor_under_test(config) == "in_process":
        return
    name = executor_under_test(config)
    ci_only = config.getoption(SET_OPTION) == "ci"
    kept, dropped = [], []
    for item in items:
        excluded = any(name in mark.args for mark in item.iter_markers("not_on")) or (
            ci_only and not item.nodeid.startswith(CI_SET)
        )
        (kept if item.get_closest_marker("graph") and not excluded else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


class _SourceReader:
    """Whether a test's code, followed through the helpers it names, reaches an entry point."""

    def __init__(self) -> None:
        self.verdicts: dict[Any, bool] = {}

    def runs_graph(self, item: pytest.Function) -> bool:
        roots: list[Any] = [item.obj]
        for name in item.fixturenames:
            for fixturedef in item._fixtureinfo.name2fixturedefs.get(name, ()):
                roots.append(fixturedef.func)
        return any(self._reaches(root, set()) for root in roots)

    def _reaches(self, func: Any, seen: set[Any]) -> bool:
        func = inspect.unwrap(func)
        if func in self.verdicts:
            return self.verdicts[func]
        if func in seen or not _ours(func):
            return False
        seen.add(func)
        try:
            source = inspect.getsource(func)
        except (OSError, TypeError):
            return False
        found = bool(ENTRY_POINTS.search(source)) or any(
            self._reaches(helper, seen) for helper in _named_helpers(func, source)
        )
        self.verdicts[func] = found
        return found


def _ours(func: Any) -> bool:
    return (inspect.isfunction(func) or inspect.isclass(func)) and str(
        getattr(func, "__module__", "")
    ).startswith("evals_pipeline_tests")


def _named_helpers(func: Any, source: str) -> Iterator[Any]:
    """The functions and classes of evals_pipeline_tests that `source` names, as its module
    sees them."""
    module: ModuleType | None = inspect.getmodule(func)
    if module is None:
        return
    try:
        tree = ast.parse(inspect.cleandoc("\n" + source) if source[:1].isspace() else source)
    except SyntaxError:
        return
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for name in names:
        helper = getattr(module, name, None)
        if helper is not None and _ours(helper):
            yield helper
        if inspect.isclass(helper):
            yield from (m for m in vars(helper).values() if _ours(m))


@pytest.fixture(scope="session", autouse=True)
def _executor_for_the_session(request: pytest.FixtureRequest) -> Iterator[None]:
    """EVALS_PIPELINE_EXECUTOR for every test of the session (module fixtures that run the
    CLI included); for celery, with the broker of the session's two workers."""
    name = executor_under_test(request.config)
    if name == "in_process":
        yield
        return
    before = dict(os.environ)
    os.environ[EXECUTOR_ENV] = name
    if name == "celery":
        os.environ[BROKER_ENV] = request.getfixturevalue("celery_broker")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(scope="session")
def celery_broker() -> Iterator[str]:
    """A Redis server and two celery workers on it, each in a folder of its own, for the
    session (per xdist worker); yields the broker's URL. The workers get this process's
    environment as the session began (no DAGSTER_HOME: each step's task carries its run's
    instance, and each run its settings), whatever a test sets later."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    with celery_workers(env) as broker:
        yield broker


@contextmanager
def celery_workers(env: dict[str, str]) -> Iterator[str]:
    """A Redis server and CELERY_WORKERS on it, each in a folder of its own, with `env`; yields
    the broker's URL."""
    folder = Path(tempfile.mkdtemp(prefix="evals-celery-"))
    try:
        with ExitStack() as stack:
            redis = stack.enter_context(running_redis())
            env = {**env, BROKER_ENV: redis.url(db=0)}
            for worker in CELERY_WORKERS:
                stack.enter_context(running_celery_worker(worker, folder / worker, env))
            yield env[BROKER_ENV]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def workers_with(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """`env` for processes that run the graph on the executor under test with an environment
    of their own (a code location's `dagster dev` or `dagster asset materialize`, a run whose
    suite reads variables the test sets). A celery worker rebuilds a run from its own
    environment (docs/scale-out.md), so on celery this starts two workers with `env`, as a
    deployment runs them with the code location's, and yields `env` with their broker;
    elsewhere, `env` as it is."""
    if env.get(EXECUTOR_ENV) != "celery":
        yield env
        return
    with celery_workers({k: v for k, v in env.items() if k != "DAGSTER_HOME"}) as broker:
        yield {**env, BROKER_ENV: broker}
