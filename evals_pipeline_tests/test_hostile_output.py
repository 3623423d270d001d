"""What a hostile agent's output can do to the people who read a run, through the real
`evals-pipeline run`: its stderr's terminal escapes (a clipboard write, a new window title, a
cleared screen, a fake "all tests passed" drawn over the real lines) reach neither the terminal
nor summary.md; and what the run writes (storage, report, kept workspaces) is private to the
runner's user unless EVALS_PIPELINE_UMASK opens it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from evals_pipeline.terminal_text import for_markdown, for_terminal

# One line on purpose: an error's first line is what the summary and the terminal show.
HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: write the reader's clipboard
    "\x1b]0;pwned\x1b\\"  # retitle the window
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b[3A\x1b[2K\rall tests passed\x1b[32m OK\x1b[0m"  # up 3 lines, erase, a fake line
    "\x9b1;1H\x9d0;c1 title\x9c"  # the same in 8-bit C1 controls
    "\x07\x08\x7f fatal: the disk is full"
)
AGENT = f"""\
import sys
if sys.argv[1] != "agent-escapes":
    open(sys.argv[2], "w").write("done")
    sys.exit(0)
sys.stderr.write({HOSTILE!r})
sys.stderr.flush()
sys.exit(3)
"""
GRADER = f"""\
import sys
sys.stdin.read()
sys.stderr.write({HOSTILE!r})
sys.exit(1)
"""
TEMPLATE_SCRIPT = "#!/bin/sh\necho hi\n"
SUITE = """\
name: hostile
targets:
  - name: agent
    provider: cli
    command: python3 {EVAL_DIR}/agent.py {EVAL_ID} {OUTPUT_FILE}
workspace:
  template: template
tests:
  - id: agent-escapes
    input: say done
    assertions: [{type: contains, value: done}]
  - id: grader-escapes
    input: say done
    assertions:
      - {name: check, type: code-grader, command: [python3, grader.py]}
"""
CONTROLS = {chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))} - {"\n", "\t"}


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    home: Path
    report: Path

    def explain(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"


def run_hostile_suite(home: Path, **env: str) -> Run:
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    (project / "agent.py").write_text(AGENT)
    (project / "grader.py").write_text(GRADER)
    (project / "hostile.eval.yaml").write_text(SUITE)
    (project / "template").mkdir()
    script = project / "template" / "run.sh"
    script.write_text(TEMPLATE_SCRIPT)
    script.chmod(0o755)
    (project / "template" / "notes.txt").write_text("notes\n")
    (project / "template" / "notes.txt").chmod(0o644)
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", "hostile.eval.yaml",
         "--keep-workspaces"],
        cwd=project,
        env={
            **os.environ,
            "DAGSTER_HOME": str(home / "dagster"),
            "EVALS_PIPELINE_STORAGE": str(home / "storage"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    line = next((x for x in done.stdout.splitlines() if x.startswith("report: ")), None)
    assert line, f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    report = Path(line.removeprefix("report: ")).parent
    return Run(done.returncode, done.stdout, done.stderr, home, report)


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Run:
    env = {k: v for k, v in os.environ.items() if k == "EVALS_PIPELINE_UMASK"}
    assert not env, "the test runs with the default umask"
    return run_hostile_suite(tmp_path_factory.mktemp("hostile"))


def test_the_terminal_gets_no_control_sequence(private: Run) -> None:
    printed = private.stdout + private.stderr
    assert "error in" in private.stdout, private.explain()
    assert "fatal: the disk is full" in private.stdout, private.explain()
    found = sorted({hex(ord(c)) for c in printed if c in CONTROLS})
    assert found == [], private.explain()
    assert "pwned" not in printed and "c1 title" not in printed
    assert "cm0gLXJmIH4K" not in printed  # the clipboard payload went with its sequence


def test_summary_md_shows_the_controls_visibly(private: Run) -> None:
    summary = (private.report / "summary.md").read_text()
    assert not {c for c in summary if c in CONTROLS}, repr(summary)
    failures = summary.split("## Failures and errors\n", 1)[1].split("\n## ", 1)[0]
    for test_id in ("agent-escapes", "grader-escapes"):
        line = next(x for x in failures.splitlines() if f"/ {test_id}:" in x)
        assert "\\x1b[" in line, line  # the reader sees what was there


def entries(*roots: Path) -> list[Path]:
    found = []
    for root in roots:
        found.append(root)
        found.extend(p for p in root.rglob("*") if not p.is_symlink())
    return found


def roots(run: Run) -> list[Path]:
    kept = [p for p in (run.home / "storage").rglob("run.sh")]
    assert kept, "the kept workspace holds the template's script"
    return [run.home / "storage", run.report, run.home / "dagster"]


def test_what_the_run_writes_is_private(private: Run) -> None:
    shared = [
        f"{oct(stat.S_IMODE(p.stat().st_mode))} {p}"
        for p in entries(*roots(private))
        if stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    assert shared == [], "\n".join(shared[:40])
    folders = [p for p in entries(*roots(private)) if p.is_dir()]
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o700}
    script = next((private.home / "storage").rglob("run.sh"))
    assert stat.S_IMODE(script.stat().st_mode) == 0o700  # still executable, by its owner only


def test_a_shared_deployment_opens_it_with_its_umask(tmp_path: Path) -> None:
    run = run_hostile_suite(tmp_path, EVALS_PIPELINE_UMASK="022")
    modes = {stat.S_IMODE(p.stat().st_mode) for p in entries(*roots(run)) if p.is_file()}
    assert 0o644 in modes and not {m for m in modes if m & 0o022}, sorted(map(oct, modes))
    closed = [p for p in entries(*roots(run)) if p.is_dir() and p.stat().st_mode & 0o055 != 0o055]
    assert not closed, [(str(p), oct(stat.S_IMODE(p.stat().st_mode))) for p in closed]
    assert (run.report / "summary.md").stat().st_mode & 0o044 == 0o044


def test_a_bad_umask_setting_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "validate", "none.eval.yaml"],
        cwd=tmp_path,
        env={**os.environ, "EVALS_PIPELINE_UMASK": "rw-r--r--"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "EVALS_PIPELINE_UMASK='rw-r--r--' is not an octal umask: use e.g. 077" in done.stderr


@pytest.mark.parametrize(
    ("text", "terminal", "markdown"),
    [
        ("plain\ttext\nline", "plain\ttext\nline", "plain\ttext\nline"),
        ("a\r\nb", "a\nb", "a\nb"),
        ("fake\rall passed", "fakeall passed", "fake\\x0dall passed"),
        ("\x1b[31mred\x1b[0m", "red", "\\x1b[31mred\\x1b[0m"),
        ("\x1b]0;title\x07after", "after", "\\x1b]0;title\\x07after"),
        ("\x1b]52;c;ZXZpbA==\x1b\\after", "after", "\\x1b]52;c;ZXZpbA==\\x1b\\after"),
        ("\x1bPq#0;2;0;0;0\x1b\\after", "after", "\\x1bPq#0;2;0;0;0\\x1b\\after"),
        ("\x1b]0;never ends", "", "\\x1b]0;never ends"),
        ("\x1b]0;to the line's end\nnext", "\nnext", "\\x1b]0;to the line's end\nnext"),
        ("\x1bcreset", "reset", "\\x1bcreset"),
        ("\x9b2Jcleared", "cleared", "\\x9b2Jcleared"),
        ("bell\x07 nul\x00 del\x7f", "bell nul del", "bell\\x07 nul\\x00 del\\x7f"),
        ("ünïcode ✓", "ünïcode ✓", "ünïcode ✓"),
    ],
)
def test_control_sequences_are_removed_for_terminals_and_shown_in_markdown(
    text: str, terminal: str, markdown: str
) -> None:
    assert for_terminal(text) == terminal
    assert for_markdown(text) == markdown
