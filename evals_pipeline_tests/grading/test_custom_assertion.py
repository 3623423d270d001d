"""Custom assertion types: the grader file runs as a real process with the code-grader payload."""

from __future__ import annotations

import sys
from pathlib import Path

from evals_pipeline.grading import grade_trial
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def test_a_custom_type_runs_its_file_with_config(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    script = tmp_path / "word-count.py"
    script.write_text(
        "import json, sys\n"
        "payload = json.load(sys.stdin)\n"
        "words = len(payload['output'].split())\n"
        "limit = payload['config']['max_words']\n"
        "print(json.dumps({'score': 1 if words <= limit else 0,"
        " 'assertions': [{'text': f'{words} words', 'passed': words <= limit}]}))\n"
    )
    spec = {
        "type": "custom",
        "custom_type": "word-count",
        "command": [sys.executable, str(script)],
        "max_words": 1,
    }
    grade = only_grader(grade_trial(make_case([spec]), make_session()))
    assert (grade.name, grade.type, grade.score) == ("word-count", "word-count", 0.0)
    assert grade.assertions[0].text == "2 words"
