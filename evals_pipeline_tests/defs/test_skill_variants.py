"""The skill-variants example end to end, as its README runs it: `evals-pipeline run` on three
variants (lanes) of the real Claude Code CLI against the scripted model server. The skill lands
only in the skill lanes' workspaces, Claude Code lists it only there, the report compares the
lanes pairwise, and with stderr not a terminal the progress comes as plain lines with counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.records import read_records
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline_tests.agent_clis import require_agent
from evals_pipeline_tests.defs.conftest import REPO

EXAMPLE = REPO / "examples" / "skill-variants"
EVALS_PIPELINE = Path(sys.executable).with_name("evals-pipeline")
SKILL_LANES = ("skill", "skill-haiku")


@pytest.fixture(scope="module")
def outcome(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    require_agent("claude-code")
    home = tmp_path_factory.mktemp("skill-variants")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
    }
    done = subprocess.run(
        [
            str(EVALS_PIPELINE),
            "run",
            "examples/skill-variants/skill-variants.eval.yaml",
            "--keep-workspaces",
            "--output",
            str(home / "out"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done, home


def report_of(home: Path) -> EvalReport:
    return EvalReport.model_validate_json((home / "out" / "report.json").read_text())


def agent_runs(home: Path) -> list[AgentRun]:
    [records] = (home / "storage" / "skill_variants" / "agent_runs").glob("*/records.parquet")
    context = StorageRoot(str(home / "storage")).record_context()  # its paths, against the root
    return [AgentRun.model_validate_json(r, context=context) for _, r in read_records(records)]


def test_the_skill_lanes_pass_what_the_baseline_fails(
    outcome: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, home = outcome
    assert done.returncode == 1, done.stdout + done.stderr  # the baseline fails two cases
    report = report_of(home)
    assert [(a.agent, a.passed, a.failed, a.errors) for a in report.agents] == [
        ("baseline", 1, 2, 0),
        ("skill", 3, 0, 0),
        ("skill-haiku", 3, 0, 0),
    ]
    assert {(f.agent, f.test_id) for f in report.failures} == {
        ("baseline", "parse-price"),
        ("baseline", "format-price"),
    }
    for agent in report.agents:
        assert agent.cost_usd > 0
        assert agent.cost_per_pass_usd == pytest.approx(agent.cost_usd / agent.passed)
    # The same skill on a cheaper model: the same passes for less.
    costs = {a.agent: a.cost_per_pass_usd or 0 for a in report.agents}
    assert costs["skill-haiku"] < costs["skill"] < costs["baseline"]


def test_the_skill_lands_only_in_the_skill_lanes_workspaces(
    outcome: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    runs = agent_runs(outcome[1])
    assert len(runs) == 9
    source = (EXAMPLE / "skills" / "money-style" / "SKILL.md").read_text()
    for run in runs:
        assert run.error is None, run.error
        workspace = Path(run.workspace_path or "")
        assert workspace.is_dir(), workspace  # --keep-workspaces
        skill = workspace / ".claude" / "skills" / "money-style" / "SKILL.md"
        assert skill.is_file() == (run.agent in SKILL_LANES), (run.agent, run.case_key)
        if skill.is_file():
            assert skill.read_text() == source
        # Installed before the git baseline: the agent's file is the only change.
        assert run.file_changes is not None and ".claude" not in run.file_changes
        # Claude Code listed the skill only where it was installed, so the script's skill rule
        # (rule 0) answered those runs and the top-level turns the baseline's.
        log = Path(run.side_files["model_server_log"]).read_text().splitlines()
        rules = {json.loads(line).get("rule") for line in log if '"rule"' in line}
        assert rules == ({0} if run.agent in SKILL_LANES else {None}), (run.agent, rules)
    tools = {a.agent: a.tool_calls for a in report_of(outcome[1]).agents}
    assert tools["baseline"] == {"Write": 3, "Bash": 3}
    assert tools["skill"] == tools["skill-haiku"] == {"Skill": 3, "Write": 3, "Bash": 3}


def test_the_report_compares_the_lanes_pairwise(
    outcome: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    report = report_of(outcome[1])
    pairs = {(c.agent_a, c.agent_b): c for c in report.comparisons}
    assert set(pairs) == {
        ("baseline", "skill"),
        ("baseline", "skill-haiku"),
        ("skill", "skill-haiku"),
    }
    for lane in SKILL_LANES:
        m = pairs[("baseline", lane)].mcnemar
        assert m is not None
        t = m.table
        assert (t.a, t.b, t.c, t.d) == (1, 0, 2, 0)  # both pass cart-total; the skill fixes two
        # By hand: two discordant cases, both the skill's way: exact p = 2 * 0.5^2 = 0.5,
        # mid-p = 0.5 - 0.5^2 = 0.25.
        assert (m.p_exact, m.p_mid) == (pytest.approx(0.5), pytest.approx(0.25))
        assert pairs[("baseline", lane)].bootstrap is not None
    same = pairs[("skill", "skill-haiku")].mcnemar
    assert same is not None and (same.table.a, same.n_discordant) == (3, 0)

    rows = {row.test_id: row for row in report.variants}
    assert {t: {a: lane.verdict for a, lane in row.lanes.items()} for t, row in rows.items()} == {
        "parse-price": {"baseline": "fail", "skill": "pass", "skill-haiku": "pass"},
        "format-price": {"baseline": "fail", "skill": "pass", "skill-haiku": "pass"},
        "cart-total": {"baseline": "pass", "skill": "pass", "skill-haiku": "pass"},
    }
    summary = (outcome[1] / "out" / "summary.md").read_text()
    assert "## Variants" in summary
    assert "| case | baseline | skill | skill-haiku | lanes differ |" in summary
    assert "| parse-price | fail 0.00 | pass 1.00 | pass 1.00 | yes |" in summary
    assert "| **passed** | 1/3 | 3/3 | 3/3 |  |" in summary
    assert (
        "- baseline vs skill (3 cases): both pass 1, only baseline 0, only skill 2, neither 0; "
        "Δ pass rate (baseline - skill) -0.667; McNemar exact p 0.5000 (mid-p 0.2500)"
    ) in summary
    page = (outcome[1] / "out" / "report.html").read_text()
    pairwise = page.split('id="variants"')[1].split("</section>")[0]
    assert pairwise.count("<tr") == 4  # the header and the three pairs
    assert '<td class="num">1</td><td class="num">0</td><td class="num">2</td>' in pairwise


def test_progress_is_plain_lines_with_counts_when_not_on_a_terminal(
    outcome: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    stderr = outcome[0].stderr
    assert "agent runs: 9 to do" in stderr
    assert len([line for line in stderr.splitlines() if line.startswith("[")]) == 27
    assert "agent runs: 9/9 done (ok 9, error 0) in " in stderr
    assert "grades: 9/9 done (pass 7, fail 2, error 0) in " in stderr
    assert "judgments: 9/9 done (" in stderr
    assert "\x1b[" not in stderr  # no terminal escapes in a log
