"""Every class of malformed suite, through the real `evals-pipeline validate` and `run`: each is
a file:line:column error with a fix and exit 2, never a traceback (issue 13, item 9).

The fixtures are files in evals_pipeline_tests/fixtures/bad-suites/; each command reads all of
them in one process, as a user's `validate evals/` would."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals_pipeline.suites import load_suite, resolve_cases

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bad-suites"

# fixture file → (line, column, the start of the message)
ERRORS = {
    "yaml-syntax.eval.yaml": (4, 1, "invalid YAML: expected ',' or ']'"),
    "tab-indent.eval.yaml": (3, 1, "invalid YAML: found character '\\t'"),
    "duplicate-key.eval.yaml": (4, 5, "duplicate key 'input' (first at line 3)"),
    "wrong-type.eval.yaml": (4, 15, "tests[0].criteria must be a string, got a list"),
    "missing-file.eval.yaml": (7, 20, "file block './no-such-file.txt' not found"),
    "binary.eval.yaml": (1, 1, "not UTF-8 text: byte 0x89"),
    "nul-byte.eval.yaml": (3, 15, "invalid YAML: the control character #x0000 is not allowed"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-suites")
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
    (root / ".git").mkdir()  # bounds the upward search for input files
    return root


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", *args],
        cwd=project,
        env={"PATH": "/usr/bin:/bin", "DAGSTER_HOME": str(project / "dagster")},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module", params=["validate", "run"])
def command(request: pytest.FixtureRequest, project: Path) -> subprocess.CompletedProcess[str]:
    """One command over every bad fixture at once; `run` stops before starting anything."""
    return _cli(project, request.param, *ERRORS)


@pytest.mark.parametrize("name", ERRORS)
def test_each_malformed_suite_is_a_positioned_error_with_a_fix(
    name: str, project: Path, command: subprocess.CompletedProcess[str]
) -> None:
    line, column, message = ERRORS[name]
    assert command.returncode == 2, command.stderr
    assert "Traceback" not in command.stderr
    issues = command.stderr.split(f"{project / name}:")
    assert len(issues) == 2, command.stderr  # exactly one issue for this file
    where, _, rest = issues[1].partition(": ")
    assert where == f"{line}:{column}"
    assert rest.startswith(message)
    fix = rest.split("\n", 2)[1]
    assert fix.startswith("    fix: ") and len(fix) > len("    fix: ")


def test_an_unknown_key_is_a_positioned_warning_and_an_error_with_strict(project: Path) -> None:
    # AgentV ignores an unknown test field with "Unknown field ... will be ignored".
    done = _cli(project, "validate", "unknown-key.eval.yaml")
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: {project / 'unknown-key.eval.yaml'}:4:5: unknown field 'inptu' in tests[0], "
        "ignored (did you mean 'input'?)"
    ) in done.stderr
    strict = _cli(project, "validate", "--strict", "unknown-key.eval.yaml")
    assert strict.returncode == 2, strict.stderr
    assert f"error (--strict): {project / 'unknown-key.eval.yaml'}:4:5: " in strict.stderr


def test_an_unset_variable_is_a_positioned_warning(project: Path) -> None:
    # AgentV reads an unset ${{ VAR }} as "" (conformance/env-interpolation): a warning, not an
    # error, that says where it is and how to set it.
    done = _cli(project, "validate", "unset-variable.eval.yaml")
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: {project / 'unset-variable.eval.yaml'}:3:12: "
        "${{ EVALS_FIXTURE_UNSET_VARIABLE }} is not set, so it reads as an empty string\n"
        "    fix: set EVALS_FIXTURE_UNSET_VARIABLE in the environment or in a .env file"
    ) in done.stderr


def test_twenty_thousand_tests_load_and_validate(tmp_path: Path) -> None:
    """Scale, not speed: the suite loads and resolves (its time shows in pytest --durations)."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / ".agentv", tmp_path / ".agentv")
    lines = ["tests:"]
    for index in range(20_000):
        lines += [
            f"  - id: test-{index}",
            f"    input: say hello {index}",
            "    assertions: [{type: contains, value: hello}]",
        ]
    suite = tmp_path / "big.eval.yaml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_suite(suite)
    cases = resolve_cases(loaded)
    assert len(cases) == 20_000
    assert len({c.case_key for c in cases}) == 20_000
    assert cases[-1].prompt == "say hello 19999"


def test_ids_with_path_separators_or_300_characters_become_safe_keys(tmp_path: Path) -> None:
    """Not errors: AgentV runs them, so they run here too, under keys that name safe folders
    (no separator, no `..`, under the 255-byte file-name limit)."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / ".agentv", tmp_path / ".agentv")
    ids = ["a/b", "../../etc/passwd", "c\\\\d", "/abs", "x" * 300]
    tests = "".join(
        f'  - {{id: "{i}", input: hi, assertions: [{{type: contains, value: hi}}]}}\n' for i in ids
    )
    suite = tmp_path / "ids.eval.yaml"
    suite.write_text(f"tests:\n{tests}", encoding="utf-8")
    keys = [c.case_key for c in resolve_cases(load_suite(suite))]
    assert len(set(keys)) == len(ids)
    for key in keys:
        assert "/" not in key and "\\" not in key and ".." not in key and len(key) < 200, key
