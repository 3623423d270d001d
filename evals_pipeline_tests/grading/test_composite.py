"""composite: members graded recursively and aggregated, code aggregators as real processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import GraderResult
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader

PARIS = {"name": "paris", "type": "contains", "value": "Hello"}
BERLIN = {"name": "berlin", "type": "contains", "value": "Berlin"}
JSON = {"name": "json", "type": "is-json"}


def _composite(
    make_case: CaseFactory,
    make_session: SessionFactory,
    members: list[Any],
    aggregator: Any,
    **extra: Any,
) -> GraderResult:
    spec = {"name": "gate", "type": "composite", "assertions": members, "aggregator": aggregator}
    return only_grader(grade_trial(make_case([{**spec, **extra}]), make_session()))


def test_weighted_average_weighs_members_by_name(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    aggregator = {"type": "weighted_average", "weights": {"paris": 3}}
    grade = _composite(make_case, make_session, [PARIS, BERLIN], aggregator)
    assert grade.score == pytest.approx(3 / 4)
    assert grade.verdict == "fail"
    assert [(m.name, m.score, m.weight) for m in grade.scores] == [
        ("paris", 1.0, 3.0),
        ("berlin", 0.0, 1.0),
    ]
    assert grade.assertions[0].text.startswith("[paris] ")


def test_threshold_passes_on_the_share_of_passing_members(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    members = [PARIS, BERLIN, JSON]
    lenient = _composite(make_case, make_session, members, {"type": "threshold", "threshold": 0.3})
    assert (lenient.score, lenient.verdict) == (pytest.approx(1 / 3), "pass")
    assert lenient.assertions[0].text == "1/3 evaluators passed (threshold: 0.3)"
    strict = _composite(make_case, make_session, members, {"type": "threshold", "threshold": 0.5})
    assert strict.verdict == "fail"


def test_nested_composites_keep_every_level(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    inner = {
        "name": "inner",
        "type": "composite",
        "assertions": [PARIS, BERLIN],
        "aggregator": {"type": "threshold", "threshold": 1},
    }
    grade = _composite(
        make_case,
        make_session,
        [inner, JSON],
        {"type": "weighted_average", "weights": {"inner": 2}},
    )
    assert grade.score == pytest.approx((2 * 0.5 + 0) / 3)
    assert [m.name for m in grade.scores[0].scores] == ["paris", "berlin"]


def test_negate_and_required_apply_to_the_composite(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    spec = {
        "name": "not-berlin",
        "type": "composite",
        "negate": True,
        "required": True,
        "assertions": [BERLIN],
        "aggregator": {"type": "weighted_average"},
    }
    trial = grade_trial(make_case([spec, {"type": "contains", "value": "nope"}]), make_session())
    assert (trial.graders[0].score, trial.graders[0].verdict) == (1.0, "pass")
    assert trial.score == 0.5


def _script(tmp_path: Path, body: str) -> str:
    (tmp_path / "agg.py").write_text(body)
    return "python3 agg.py"


def test_code_aggregator_reads_member_results_and_may_set_the_verdict(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    path = _script(
        tmp_path,
        "import json, sys\n"
        "results = json.load(sys.stdin)['results']\n"
        "json.dump({'score': 0.25, 'verdict': 'pass', 'assertions': [{'text': ','.join("
        "f\"{k}={v['verdict']}\" for k, v in sorted(results.items())), 'passed': True}]},"
        " sys.stdout)\n",
    )
    grade = _composite(
        make_case, make_session, [PARIS, BERLIN], {"type": "code-grader", "path": path}
    )
    assert (grade.score, grade.verdict) == (0.25, "pass")
    assert grade.assertions[0].text == "berlin=fail,paris=pass"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            "import sys\nprint('no', file=sys.stderr)\nsys.exit(2)\n",
            "code aggregator exited with code 2: no",
        ),
        ("print('not json')\n", "code aggregator printed no numeric score: 'not json'"),
    ],
)
def test_a_broken_code_aggregator_is_a_grader_error(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path, body: str, error: str
) -> None:
    grade = _composite(
        make_case,
        make_session,
        [PARIS],
        {"type": "code-grader", "path": _script(tmp_path, body)},
    )
    assert (grade.verdict, grade.score, message_of(grade.error)) == ("error", None, error)
    assert [m.name for m in grade.scores] == ["paris"]


def test_a_failing_member_makes_the_composite_an_error(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    (tmp_path / "crash.py").write_text("import sys\nsys.exit('crashed')\n")
    crashing = {"name": "crash", "type": "code-grader", "command": ["python3", "crash.py"]}
    grade = _composite(make_case, make_session, [PARIS, crashing], {"type": "weighted_average"})
    assert grade.verdict == "error"
    assert grade.error is not None and message_of(grade.error).startswith("member 'crash' failed: ")
    assert json.dumps(grade.model_dump(mode="json"))  # the whole tree serialises
