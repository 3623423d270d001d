"""A Python code grader: the answer must be a three-line poem."""

from evals_pipeline.grader import GraderInput, Score, grader


@grader
def check(inp: GraderInput) -> Score:
    lines = [line for line in (inp.output or "").splitlines() if line.strip()]
    three = len(lines) == 3
    last = inp.messages[-1].text() if inp.messages else ""
    return Score(
        score=1.0 if three else 0.0,
        assertions=[
            (f"has three lines (found {len(lines)})", three, None),
            ("the transcript's last message is the answer", last == inp.output, last[:80]),
        ],
    )
