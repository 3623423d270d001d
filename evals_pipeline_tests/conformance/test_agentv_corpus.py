"""The differential test over AgentV 4.42.4's own published corpus (examples/ and evals/).

The eval files are discovered, never listed. For each one:
1. the real `agentv validate` says whether AgentV accepts it (it skips `EVAL.yaml` by name, so
   those are validated as renamed copies in the same folder; it reads no JSON, so an Agent
   Skills `evals.json` counts as accepted and `agentv eval` decides);
2. every file AgentV accepts must load here (warnings allowed, as AgentV allows them);
3. the real `agentv eval` runs it offline; when that writes results, evals-pipeline runs it too,
   and the two are compared test by test: score, execution status, each grader's score and
   verdict. A difference must be listed, with its reason, in corpus-differences.yaml, and a
   listed difference that is no longer seen fails as well, so the list stays true.

Each file's outcome goes to the session's outcome folder, and its summary prints the counts:
files, accepted, loaded, suites compared, tests equal (conftest.py).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
import yaml

from evals_pipeline.suites.errors import SuiteError
from evals_pipeline.suites.loader import load_suite
from evals_pipeline.suites.slugs import slugify
from evals_pipeline_tests.conformance.corpus import corpus_root, make_writable
from evals_pipeline_tests.conformance.corpus_outcomes import Outcome, folder_of
from evals_pipeline_tests.conformance.parity import (
    AGENTV,
    CONFORMANCE,
    Difference,
    Key,
    Row,
    base_env,
    differences,
    model_server_env,
    run_agentv,
    run_ours,
)

CORPUS = corpus_root()
DIFFERENCES_FILE = Path(__file__).with_name("corpus-differences.yaml")
ROOT_FILES = Path(__file__).with_name("corpus-root")
"""The repository-root targets file the published corpus leaves out, and its model's script."""
RENAMED = "EVAL.agentv-validate.eval.yaml"
"""The name an `EVAL.yaml` is validated under: agentv validate skips EVAL.yaml by name."""
EVAL_SCHEMA = "agentv-eval-v2"
OFFLINE = {
    # Graders run with `uv run` take the machine's Python and never ask a package index.
    "UV_OFFLINE": "1",
    "UV_PYTHON_DOWNLOADS": "never",
    # Suites that clone from GitHub fail at once on a closed port on this machine, in both tools,
    # instead of reaching out: git honours the proxy variables, and the model server is exempt.
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}
SKILLS = "evals.json"


def _eval_files(root: Path) -> list[str]:
    """Every eval file of the corpus, relative to it: `*.eval.yaml`, `EVAL.yaml`, YAML that
    declares AgentV's eval schema and Agent Skills' `evals.json`, outside node_modules and
    hidden folders."""
    found: set[str] = set()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") or part == "node_modules" for part in relative.parts[:-1]):
            continue
        if _is_eval_file(path):
            found.add(str(relative))
    return sorted(found)


def _is_eval_file(path: Path) -> bool:
    name = path.name
    if name.endswith((".eval.yaml", ".eval.yml")) or name in ("EVAL.yaml", "EVAL.yml", SKILLS):
        return True
    return name.endswith((".yaml", ".yml")) and _declares_eval_schema(path)


def _declares_eval_schema(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("$schema") == EVAL_SCHEMA


FILES = _eval_files(CORPUS)


@dataclass(frozen=True)
class Copies:
    """Two private copies of the corpus, one per tool, each a git repository (agentv finds the
    repository root for file references) with AgentV's SDK on its node_modules path."""

    agentv: Path
    ours: Path
    accepted: frozenset[str]


def _copy(into: Path) -> Path:
    shutil.copytree(CORPUS, into, symlinks=True)
    make_writable(into)
    # A repository with one commit, as AgentV's own is: suites' hooks read its history.
    git = ["git", "-C", str(into), "-c", "user.name=corpus", "-c", "user.email=corpus@localhost"]
    subprocess.run(["git", "init", "--quiet", str(into)], check=True)
    subprocess.run([*git, "add", "--all"], check=True)
    subprocess.run([*git, "commit", "--quiet", "--no-verify", "-m", "corpus"], check=True)
    (into / "node_modules").symlink_to(CONFORMANCE / "node_modules")
    (into / ".agentv").mkdir(exist_ok=True)
    shutil.copyfile(ROOT_FILES / "targets.yaml", into / ".agentv" / "targets.yaml")
    return into


def _accepted(root: Path, files: list[str], env: dict[str, str]) -> frozenset[str]:
    """The files `agentv validate` marks valid (it prints ✓ or ✗ before each path), and every
    `evals.json` (validate reads YAML only)."""
    named: dict[str, str] = {}
    for file in files:
        if Path(file).name == SKILLS:
            continue
        if Path(file).name.startswith("EVAL."):
            renamed = str(Path(file).with_name(RENAMED))
            shutil.copyfile(root / file, root / renamed)
            named[renamed] = file
        else:
            named[file] = file
    result = subprocess.run(
        [str(AGENTV), "validate", *named],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    for renamed, file in named.items():
        if renamed != file:
            (root / renamed).unlink()
    valid = {
        str(Path(line[2:].strip()).relative_to(root))
        for line in result.stdout.splitlines()
        if line.startswith("✓ ")
    }
    assert valid, f"agentv validate reported no valid file:\n{result.stdout}\n{result.stderr}"
    skills = {file for file in files if Path(file).name == SKILLS}
    return frozenset({named[name] for name in valid} | skills)


@pytest.fixture(scope="session")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Copies:
    if not AGENTV.exists():
        pytest.fail(f"{AGENTV} is missing: run `make agentv` (needs node and npm)")
    base = tmp_path_factory.mktemp("agentv-corpus")
    home = base / "home"
    home.mkdir()
    agentv = _copy(base / "agentv")
    ours = _copy(base / "ours")
    return Copies(agentv, ours, _accepted(agentv, FILES, base_env(home, {})))


@dataclass(frozen=True)
class Listed:
    """A listed difference: one (file, test, target) or, with `*` in `file`, `test_id` or
    `target`, a rule for every place it matches; `field` may hold `*` too (`grader * verdict`)."""

    file: str
    test_id: str
    target: str
    field: str
    agentv: Any
    ours: Any
    reason: str

    def explains(self, file: str, found: Difference) -> bool:
        return (
            fnmatchcase(file, self.file)
            and fnmatchcase(found.test_id, self.test_id)
            and fnmatchcase(found.target, self.target)
            and fnmatchcase(found.field, self.field)
            and _same(found.agentv, self.agentv)
            and _same(found.ours, self.ours)
        )

    @property
    def exact(self) -> bool:
        """Names one place, so it must still be seen there (a rule may match nothing today)."""
        return not any("*" in part for part in (self.file, self.test_id, self.target))


def _same(value: Any, listed: Any) -> bool:
    """Whether a value seen is the listed one (`*` lists any value)."""
    return listed == "*" or value == listed


def _listed() -> list[Listed]:
    entries = yaml.safe_load(DIFFERENCES_FILE.read_text()) or []
    for entry in entries:
        if not entry.get("reason"):
            raise ValueError(f"{DIFFERENCES_FILE}: every difference needs a reason: {entry}")
    return [Listed(**entry) for entry in entries]


LISTED = _listed()


def _relabel(file: str, agentv: dict[Key, Row], ours: dict[Key, Row]) -> list[Difference]:
    """Pair the rows a listed `target` difference labels apart (AgentV's label → ours), so they
    are compared field by field; the relabelling is itself a difference, listed."""
    relabelled: list[Difference] = []
    for rule in (d for d in LISTED if d.field == "target" and fnmatchcase(file, d.file)):
        for test_id, target in list(agentv):
            mine = (test_id, slugify(rule.ours))
            if (
                target == slugify(rule.agentv)
                and fnmatchcase(test_id, rule.test_id)
                and mine in ours
                and (test_id, target) not in ours
            ):
                agentv[mine] = agentv.pop((test_id, target))
                relabelled.append(Difference(test_id, target, "target", rule.agentv, rule.ours))
    return relabelled


def test_the_corpus_is_there() -> None:
    assert len(FILES) > 100, f"{CORPUS} lost eval files: found {len(FILES)}"
    unknown = sorted({d.file for d in LISTED if d.exact} - set(FILES))
    assert not unknown, f"{DIFFERENCES_FILE.name} names files the corpus lacks: {unknown}"


@pytest.mark.parametrize("file", FILES)
def test_agentv_corpus(
    file: str, copies: Copies, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    outcome = Outcome(file)
    try:
        _check(file, copies, tmp_path, outcome)
    finally:
        outcome.save(folder_of(request.config))


def _check(file: str, copies: Copies, tmp_path: Path, outcome: Outcome) -> None:
    if file not in copies.accepted:
        outcome.why_not_run = "agentv validate rejects it"
        return
    outcome.accepted = True
    home = tmp_path / "home"
    home.mkdir()
    suite = Path(file)
    with model_server_env(ROOT_FILES) as extra, pytest.MonkeyPatch.context() as patch:
        env = base_env(home, {**extra, **OFFLINE})
        for name, value in extra.items():
            patch.setenv(name, value)  # the root targets file names the model server
        try:
            load_suite(copies.ours / file)
        except SuiteError as exc:
            pytest.fail(f"agentv accepts {file}; evals-pipeline does not load it:\n{exc}")
        outcome.loaded = True
        agentv = run_agentv(copies.agentv / suite, tmp_path / "agentv-out", env)
        if not agentv.rows:
            last = [line for line in agentv.console.splitlines() if line.strip()][-1:]
            outcome.why_not_run = f"agentv runs no test offline: {''.join(last)[:300]}"
            return
        outcome.agentv_ran = True
        ours = run_ours(
            copies.ours / suite,
            tmp_path / "ours-out",
            tmp_path / "state",
            env,
            suite_writable=False,
        )
    found = _relabel(file, agentv.rows, ours.rows) + differences(agentv.rows, ours.rows)
    outcome.tests = len(agentv.rows.keys() | ours.rows.keys())
    outcome.equal = outcome.tests - len({(d.test_id, d.target) for d in found})
    unexplained = []
    for difference in found:
        reason = next((d.reason for d in LISTED if d.explains(file, difference)), None)
        if reason is None:
            unexplained.append(difference.describe())
        else:
            why = reason.split(". ")[0].rstrip(".")
            outcome.deliberate.append(f"{difference.describe()} (because: {why})")
    vanished = [
        f"{d.test_id} / {d.target}: {d.field}"
        for d in LISTED
        if d.exact and d.file == file and not any(d.explains(file, f) for f in found)
    ]
    console = f"\n--- agentv ---\n{agentv.console[-3000:]}\n--- evals-pipeline ---\n{ours.console[-3000:]}"
    assert not unexplained, f"{file}:\n" + "\n".join(unexplained) + console
    assert not vanished, f"{file}: listed differences no longer seen:\n" + "\n".join(vanished)
