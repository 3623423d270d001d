"""What a person tries first on `evals-pipeline`: `--version`, `--help` on every command and
option, and a folder given where suites are expected, on the real command."""

from __future__ import annotations

import argparse
import re
import shutil
from importlib.metadata import version
from pathlib import Path

from evals_pipeline.cli import build_parser
from evals_pipeline_tests.test_cli import QUICKSTART, cli, write


def _actions_without_help(parser: argparse.ArgumentParser, path: str) -> list[str]:
    """Every action of `parser` and its subcommands, at any depth, whose help is empty."""
    missing = []
    for action in parser._actions:
        name = "/".join(action.option_strings) or action.dest
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
            missing.append(f"{path} {name}")
        if isinstance(action, argparse._SubParsersAction):
            helped = {a.dest: a.help for a in action._choices_actions}
            for command, sub in action.choices.items():
                if not (helped.get(command) or "").strip():
                    missing.append(f"{path} {command}")
                missing.extend(_actions_without_help(sub, f"{path} {command}"))
    return missing


def test_every_command_and_option_has_help() -> None:
    parser = build_parser()
    assert _actions_without_help(parser, "evals-pipeline") == []
    # The walk reaches every command (a walk that found none would pass vacuously).
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"run", "estimate", "compare", "validate", "assert"} <= set(commands.choices)


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    done = cli("--version", home=tmp_path)
    assert done.code == 0, done.explain()
    assert done.stdout.strip() == f"evals-pipeline {version('evals-pipeline')}"
    assert re.fullmatch(r"evals-pipeline \d+\.\d+\.\d+\S*", done.stdout.strip())


def test_help_of_a_command_shows_each_options_text(tmp_path: Path) -> None:
    done = cli("estimate", "--help", home=tmp_path)
    assert done.code == 0, done.explain()
    assert "--test-id GLOB as for run" in " ".join(done.stdout.split())


def _suite(name: str, answer: str) -> str:
    return f"""\
        name: {name}
        targets:
          - name: echo
            provider: mock
            response: {answer}
        tests:
          - id: says-{answer}
            input: Say {answer}.
            assertions:
              - type: contains
                value: {answer}
        """


def test_run_a_folder_runs_every_suite_validate_finds_there(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / "evals" / "one", "one.eval.yaml", _suite("one", "hello"))
    write(project / "evals" / "two", "EVAL.yaml", _suite("two", "bye"))
    write(project / "evals" / ".agentv", "ignored.eval.yaml", "not: a suite\n")
    folder = str(project / "evals")
    checked = cli("validate", folder, home=tmp_path)
    assert checked.code == 0, checked.explain()
    validated = re.findall(r"^ok: (\S+)", checked.stdout, re.MULTILINE)
    assert [Path(p).name for p in validated] == ["one.eval.yaml", "EVAL.yaml"]
    done = cli("run", folder, home=tmp_path)
    assert done.code == 0, done.explain()
    reports = re.findall(r"^report: (\S+)", done.stdout, re.MULTILINE)
    # One report per suite, in validate's order: storage/<suite>/eval_report/<run>/summary.md.
    assert [Path(r).parents[2].name for r in reports] == ["one", "two"], done.explain()


def test_run_a_folder_without_suites_or_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    empty = cli("run", str(tmp_path / "empty"), home=tmp_path)
    assert empty.code == 2 and "no suite files" in empty.stderr, empty.explain()
    missing = cli("validate", str(tmp_path / "nowhere"), home=tmp_path)
    assert missing.code == 2, missing.explain()
    assert "nowhere:1:1: no such file or folder" in missing.stderr
    assert "Traceback" not in missing.stderr


_VERDICT = {"pass": "pass", "passes": "pass", "fail": "fail", "fails": "fail"}
_VERDICT |= {"error": "error", "errors": "error"}


def _commented_verdicts(suite_file: Path) -> dict[tuple[str, str], str]:
    """{(agent, test id): verdict} as the comment above each test states it: clauses split by
    ';', each naming an agent (or "Both agents") and, first among its words, pass/fail/error."""
    stated: dict[tuple[str, str], str] = {}
    comment: list[str] = []
    for line in suite_file.read_text().splitlines():
        text = line.strip()
        if text.startswith("#"):
            comment.append(text.lstrip("# "))
            continue
        if match := re.fullmatch(r"- id: (\S+)", text):
            assert comment, f"test {match[1]} has no comment saying what it does"
            for clause in " ".join(comment).split(";"):
                words = re.findall(r"[\w-]+", clause.lower())
                verdict = next(_VERDICT[w] for w in words if w in _VERDICT)
                agents = ["careful", "hasty"] if words[:2] == ["both", "agents"] else words[:1]
                for agent in agents:
                    stated[(agent, match[1])] = verdict
        comment = []
    return stated


def test_the_quickstarts_comments_say_what_each_test_does(tmp_path: Path) -> None:
    from evals_pipeline.history import read_outcomes

    suite = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, suite)
    (suite / ".git").mkdir()
    done = cli("run", str(suite / "quickstart.eval.yaml"), home=tmp_path)
    assert done.code in (0, 1), done.explain()
    line = next(x for x in done.stdout.splitlines() if x.startswith("report: "))
    outcomes = read_outcomes(Path(line.removeprefix("report: ")).parent)
    ran = {(o.agent, o.test_id): o.verdict for o in outcomes}
    assert len(ran) == 20, done.explain()
    assert _commented_verdicts(suite / "quickstart.eval.yaml") == ran
