"""`estimate` and `run --budget` count what grading costs, on the real CLI: a suite whose LLM
target (priced, $0.10 a run) is graded by a priced LLM grader ($0.05 a grade), both answering
from the scripted model server on 127.0.0.1; and before a suite's first run, a labelled guess."""

from __future__ import annotations

import shutil
from pathlib import Path
from textwrap import dedent

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evals_pipeline_tests.test_cli import cli

JUDGE_REPLY = '{"score": 1.0, "assertions": [{"text": "says done", "passed": true}]}'


def write_suite(root: Path) -> Path:
    """Three tests on target `a` ($0.10 a run), each graded once by `judge` ($0.05 a call)."""
    (root / ".git").mkdir(parents=True)
    (root / "model.yaml").write_text(
        "side_requests: false\n"
        "turns: [{text: done, usage: {input_tokens: 1000, output_tokens: 0}}]\n"
    )
    (root / "judge.yaml").write_text(
        f"turns: [{{text: '{JUDGE_REPLY}', usage: {{input_tokens: 1000, output_tokens: 0}}}}]\n"
    )
    path = root / "graded.eval.yaml"
    path.write_text(
        dedent(
            """\
            name: graded
            execution: {targets: [a], workers: 2}
            targets:
              - {name: a, provider: openai, model: scripted, model_server: {script: model.yaml},
                 pricing: {input: 100, output: 100}, grader_target: judge}
              - {name: judge, provider: openai, model: judge, model_server: {script: judge.yaml},
                 pricing: {input: 50, output: 50}}
            tests:
            """
        )
        + "".join(
            f"  - {{id: t0{i}, input: question {i}, "
            "assertions: [{type: llm-grader, prompt: Says done}]}\n"
            for i in range(3)
        )
    )
    return path


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The suite and a home (Dagster instance and storage) holding one report of it."""
    root = tmp_path_factory.mktemp("graded")
    suite = write_suite(root / "p")
    (root / "home").mkdir()
    done = cli("run", str(suite), home=root / "home")
    assert done.code == 0, done.explain()
    return suite, root / "home"


def reports(home: Path) -> list[Path]:
    return sorted((home / "storage" / "graded" / "eval_report").glob("*/"))


def test_the_report_keeps_what_grading_cost_per_case(ran: tuple[Path, Path]) -> None:
    _, home = ran
    (folder,) = reports(home)
    rows = pq.read_table(folder / "cases.parquet").to_pylist()
    assert [r["cost_usd"] for r in rows] == pytest.approx([0.10] * 3)
    assert [r["judge_cost_usd"] for r in rows] == pytest.approx([0.05] * 3)


def test_estimate_counts_graders_and_judges(ran: tuple[Path, Path], tmp_path: Path) -> None:
    suite, home = ran
    # --no-cache: every case counted, as if none were stored (test_estimate_reuse.py).
    done = cli("estimate", str(suite), "--no-cache", home=home)
    assert done.code == 0, done.explain()
    assert done.stdout.startswith(
        "estimate: 3 cases x 1 agent, ~$0.4500 ($0.3000 agents + $0.1500 graders and judges) and ~"
    ), done.stdout
    # The same report without its grading cost: the estimate is the agents' alone.
    bare = tmp_path / "home"
    shutil.copytree(home / "storage", bare / "storage")
    (folder,) = reports(bare)
    table = pq.read_table(folder / "cases.parquet")
    column = table.schema.get_field_index("judge_cost_usd")
    nulls = pa.nulls(table.num_rows, pa.float64())
    pq.write_table(table.set_column(column, "judge_cost_usd", nulls), folder / "cases.parquet")
    done = cli("estimate", str(suite), "--no-cache", home=bare)
    assert done.stdout.startswith("estimate: 3 cases x 1 agent, ~$0.3000 and ~"), done.stdout


def test_estimate_before_any_run_is_a_labelled_guess(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "p")
    (tmp_path / "home").mkdir()
    done = cli("estimate", str(suite), "--budget", "5", home=tmp_path / "home")
    assert done.code == 0, done.explain()
    # 50,000 input and 5,000 output tokens a run at $100 per million: $5.50 a run, 3 runs.
    assert done.stdout.splitlines() == [
        "estimate: 3 cases x 1 agent, ~$16.50 (guess: no previous run; from token prices x "
        "55,000 expected tokens per case, 50,000 in and 5,000 out; agents only, graders and "
        "judges not counted; time unknown)",
        "the budget of $5 stops the run after ~1 of 3 runs",
    ]


def test_a_budget_under_the_estimate_with_grading_stops_before_running(
    ran: tuple[Path, Path], tmp_path: Path
) -> None:
    """$0.35 covers the agents ($0.30) but not their grading ($0.15): nothing runs (with
    --no-cache, which runs every case again)."""
    suite, home = ran
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    done = cli("run", str(suite), "--budget", "0.35", "--no-cache", home=copy)
    assert done.code == 3, done.explain()
    assert (
        "the budget of $0.35 is under the estimate of ~$0.4500 (agents, graders and judges, "
        "from past runs): the run does not start; raise --budget, or run fewer cases "
        "(--test-id, --target)"
    ) in done.stderr
    assert "agent runs:" not in done.stdout
    assert len(reports(copy)) == 1, "no new report: the run never started"


def test_judge_panels_are_charged_to_their_cases() -> None:
    """A dimension panel's cost goes to its (case, agent); a pairwise panel's, half to each of
    the pair; a case nothing priced has None, not 0."""
    from evals_pipeline.reporting.judge_usage import case_judge_costs
    from evals_pipeline_tests.reporting.judged_records import consistent, graded, judged, pair

    grades = [graded("a", "t1", ["pass"]), graded("b", "t1", ["fail"]), graded("a", "t2", ["pass"])]
    judgments = [judged("a", "t1", [True], calls=3, cost=0.03)]
    pairwise = [pair("t1", "a", "b", "A", consistent())]  # $0.01 for the pair
    costs = case_judge_costs(grades, judgments, pairwise)
    assert costs[("t1", "a")] == pytest.approx(0.035)
    assert costs[("t1", "b")] == pytest.approx(0.005)
    assert costs[("t2", "a")] is None
