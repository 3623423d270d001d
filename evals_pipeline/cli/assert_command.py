"""`assert`: one grader on an answer, without an agent."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evals_pipeline.cli.exits import EXIT_OK, EXIT_THRESHOLD, usage_error
from evals_pipeline.cli.selection import load_suites, select_agents
from evals_pipeline.terminal_text import for_terminal

if TYPE_CHECKING:
    from evals_pipeline.grading import standalone as standalone_types


def cmd_assert(args: argparse.Namespace) -> int:
    """Run one grader without an agent and print its verdict; exit 0 at score >= 0.5, else 1."""
    from evals_pipeline.grading import standalone
    from evals_pipeline.suites import resolve_cases

    try:
        if args.file:
            answer = standalone.read_answer_file(Path(args.file))
        elif args.session:
            answer = standalone.Answer(
                input=args.agent_input or "", session_file=Path(args.session).resolve()
            )
        elif args.agent_output is not None:
            answer = standalone.Answer(output=args.agent_output, input=args.agent_input or "")
        else:
            return usage_error(
                "give the answer: --agent-output TEXT, --file FILE or --session FILE"
            )
        if args.suite is None:
            if args.name is None:
                return usage_error("name the grader (.agentv/graders/<name>.*), or give --suite")
            script = standalone.find_grader(args.name, Path.cwd())
            verdict = standalone.run_named_grader(script, answer, Path.cwd())
        else:
            if args.test is None:
                return usage_error("--suite needs --test ID: which test's assertion to run")
            loaded = load_suites([args.suite])
            if isinstance(loaded, int):
                return loaded
            agents = select_agents(loaded[0], [args.target] if args.target else [])
            if isinstance(agents, str):
                return usage_error(agents)
            cases = [
                c
                for c in resolve_cases(loaded[0], targets=agents or None)
                if c.test_id == args.test
            ]
            if not cases:
                return usage_error(f"no test '{args.test}' in {args.suite}")
            spec = standalone.pick_assertion(cases[0], args.name)
            verdict = standalone.grade_suite_assertion(cases[0], spec, answer)
    except standalone.AssertInputError as exc:
        return usage_error(str(exc))
    _print_verdict(verdict, as_json=args.json)
    return EXIT_OK if verdict.passed else EXIT_THRESHOLD


def _print_verdict(verdict: standalone_types.Verdict, *, as_json: bool) -> None:
    from evals_pipeline.grading.standalone import PASS_SCORE

    evaluation = verdict.evaluation
    if evaluation.stderr:
        print(for_terminal(evaluation.stderr.rstrip()), file=sys.stderr)
    if as_json:
        print(json.dumps(verdict.result_json(), indent=2, ensure_ascii=False))
        return
    score = "none" if evaluation.score is None else f"{evaluation.score:g}"
    outcome = "error" if evaluation.error else "pass" if verdict.passed else "fail"
    print(f"{verdict.name}: {outcome} (score {score}; pass at >= {PASS_SCORE})")
    for passed, label in ((True, "hits"), (False, "misses")):
        lines = [a for a in evaluation.assertions if a.passed is passed]
        if lines:
            print(f"{label}:")
        for a in lines:
            evidence = f" ({a.evidence})" if a.evidence else ""
            print(for_terminal(f"  {'✓' if passed else '✗'} {a.text}{evidence}"))
    if evaluation.details:
        print(for_terminal("details: " + json.dumps(evaluation.details, ensure_ascii=False)))
    if evaluation.error:
        print(for_terminal(f"error: {evaluation.error}"))
