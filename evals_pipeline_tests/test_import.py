"""`evals-pipeline import`: existing claude, codex and pi sessions graded without running an agent.

The inputs are real captures: claude's stream-json, codex's own rollout file and pi's own session
file, all of the same scripted task (write hello.py, run it).
"""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.models.report import EvalReport
from evals_pipeline_tests.test_cli import cli, counts, table_rows, write

TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "transcripts"

SUITE = """\
name: imported
execution:
  targets: [claude, codex, pi]
targets:
  - {name: claude, provider: replay, sessions_dir: sessions/claude}
  - {name: codex, provider: replay, sessions_dir: sessions/codex}
  - {name: pi, provider: replay, sessions_dir: sessions/pi}
tests:
  - id: hello
    input: Create hello.py that prints a greeting, then run it.
    assertions:
      - type: contains
        value: hello from the fake LLM
      - type: tool-trajectory
        mode: exact
        expected: [{tool: Write}, {tool: Bash}]
      - type: token-usage
        max_total: 100000
"""


def test_imported_sessions_are_graded_by_the_judge_and_report_layers(tmp_path: Path) -> None:
    sources = {
        "claude": TRANSCRIPTS / "claude.jsonl",
        "codex": TRANSCRIPTS / "codex.rollout.jsonl",
        "pi": TRANSCRIPTS / "pi.session.jsonl",
    }
    for agent, source in sources.items():
        done = cli(
            "import",
            str(source),
            "--into",
            str(tmp_path / "sessions" / agent),
            "--test-id",
            "hello",
            home=tmp_path,
        )
        assert done.code == 0, done.explain()
        assert "2 tool calls (Write, Bash)" in done.stdout, done.explain()
        assert (tmp_path / "sessions" / agent / "hello.jsonl").is_file()

    suite = write(tmp_path, "imported.eval.yaml", SUITE)
    done = cli("run", str(suite), home=tmp_path)
    assert done.code == 0, done.explain()
    rows = table_rows(done.stdout)
    assert {agent: counts(row) for agent, row in rows.items()} == {
        "claude": (1, 1, 0, 0),
        "codex": (1, 1, 0, 0),
        "pi": (1, 1, 0, 0),
    }
    # Milestones count from each recorded stream's own start, not from the replay's: the streams
    # were captured at another time, so the replay's clock would make them hugely negative.
    (report_file,) = (tmp_path / "storage").glob("imported/eval_report/*/report.json")
    report = EvalReport.model_validate_json(report_file.read_text())
    milestones = {a.agent: a.milestone_ms for a in report.agents}
    assert milestones == {
        "claude": {"first_file_edit": 0, "last_edit": 0, "final_answer": 279},
        "codex": {"first_file_edit": 74, "last_edit": 74, "final_answer": 718},
        "pi": {"first_file_edit": 134, "last_edit": 134, "final_answer": 436},
    }


def test_a_file_no_agent_wrote_is_refused_with_the_reason(tmp_path: Path) -> None:
    other = write(tmp_path, "notes.jsonl", '{"role": "user", "content": "hi"}\n')
    done = cli("import", str(other), "--into", str(tmp_path / "out"), home=tmp_path)
    assert done.code == 2
    assert "not a claude-code, codex or pi-agent session" in done.stderr
    assert str(other) in done.stderr
