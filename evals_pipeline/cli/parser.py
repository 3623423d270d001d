"""The command line: every subcommand, its options and the function that runs it."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from evals_pipeline.cli.assert_command import cmd_assert
from evals_pipeline.cli.history import cmd_compare, cmd_runs
from evals_pipeline.cli.import_sessions import cmd_import
from evals_pipeline.cli.model_server import cmd_model_server
from evals_pipeline.cli.run import cmd_estimate, cmd_run
from evals_pipeline.cli.suite_commands import cmd_register, cmd_schema, cmd_validate
from evals_pipeline.cli.ui import UI_PORT, cmd_ui
from evals_pipeline.cli.view import cmd_view
from evals_pipeline.view.links import DEFAULT_HOST, DEFAULT_PORT


def _unit_interval(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not an amount in USD (e.g. 2.50)") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not an amount in USD >= 0")
    return value


def _version() -> str:
    try:
        return version("evals-pipeline")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


SUITES_HELP = "eval YAML files, or folders: every suite under them, as validate finds them"
STRICT_HELP = "make every warning an error (exit 2), e.g. an unknown field or a skipped test"


def build_parser() -> argparse.ArgumentParser:
    """The `evals-pipeline` parser: one subparser per command, each built by its own function."""
    parser = argparse.ArgumentParser(
        prog="evals-pipeline",
        description="Evaluate coding agents on your own tasks, as a Dagster asset graph.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}", help="print the version"
    )
    sub = parser.add_subparsers(
        dest="command", required=True, help="the command (each has its own --help)"
    )
    _add_run(sub)
    _add_estimate(sub)
    _add_history(sub)
    _add_view(sub)
    _add_suite_commands(sub)
    _add_import(sub)
    _add_assert(sub)
    _add_model_server(sub)
    _add_ui(sub)
    return parser


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`run`: the suites, which of their tests and targets run, then the rest of its options (split in
    two, in --help order)."""
    run = sub.add_parser(
        "run", help="run whole suites through the asset graph and print the summary"
    )
    run.add_argument("suites", nargs="+", metavar="SUITE", help=SUITES_HELP)
    run.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME",
        help="only this target (repeatable)",
    )
    run.add_argument(
        "--test-id",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the tests whose id matches (repeatable, glob; as agentv eval --test-id)",
    )
    run.add_argument(
        "--targets",
        metavar="FILE",
        help="the targets file (or a folder holding one), instead of the one found near each "
        "suite (as agentv eval --targets)",
    )
    _add_run_outputs(run)
    _add_run_controls(run)
    run.set_defaults(func=cmd_run)


def _add_run_outputs(run: argparse.ArgumentParser) -> None:
    """`run`'s concurrency, storage, pass threshold, report files and suite tag filters."""
    run.add_argument("--output", metavar="DIR", help="also copy the report files into DIR")
    run.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="concurrent agents (default: the suite's execution.workers)",
    )
    run.add_argument(
        "--storage",
        metavar="DIR",
        help="storage root (default: $EVALS_PIPELINE_STORAGE or .evals/storage)",
    )
    run.add_argument(
        "--threshold",
        type=_unit_interval,
        metavar="X",
        help="pass score (0-1) of every test that sets no execution.threshold (default 0.8); "
        "as agentv, exit 1 when a case scores below it (default: the suite's "
        "execution.threshold; without either, failures do not change the exit code)",
    )
    run.add_argument(
        "--junit",
        metavar="FILE",
        help="write JUnit XML: one testcase per case x target, failures and errors with reasons",
    )
    run.add_argument(
        "--summary-md",
        metavar="FILE",
        help="write a Markdown summary fit for a pull-request comment",
    )
    run.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only suites whose tags include TAG (repeatable: all of them)",
    )
    run.add_argument(
        "--exclude-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="skip suites whose tags include TAG (repeatable)",
    )


def _add_run_controls(run: argparse.ArgumentParser) -> None:
    """`run`'s controls: spend and provider caps, workspaces, caching, scoring and strictness."""
    run.add_argument(
        "--budget",
        type=_usd,
        metavar="USD",
        help="spend cap of the whole run over every agent and suite: once the finished agent "
        "runs cost this much, no new one starts, runs in flight finish, and the rest are "
        "'not run' (exit 3 when nothing failed)",
    )
    run.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="PROVIDER=N",
        help="at most N agent runs (claude-code, codex, pi-agent, cli, ...) or LLM calls "
        "(anthropic, openai, ...) of PROVIDER at once, whatever the workers (repeatable; "
        "default: $EVALS_PIPELINE_PROVIDER_LIMITS)",
    )
    run.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep every run's workspace (default: kept only when the case fails or errors)",
    )
    run.add_argument(
        "--no-cache",
        action="store_true",
        help="run every case again, even those whose stored result is still current "
        "(default: reuse them; see docs/durability.md)",
    )
    run.add_argument(
        "--agentv-scoring",
        action="store_true",
        help="score a grader that crashed, timed out or printed garbage 0 and average it in, as "
        "agentv does, to compare numbers with it (default: the case is an error); the grader "
        "keeps its error, shown as a warning",
    )
    run.add_argument(
        "--verbose", action="store_true", help="accepted for agentv; progress is always printed"
    )
    run.add_argument("--strict", action="store_true", help=STRICT_HELP)


def _add_estimate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`estimate`: the cost and time of a run, from the last runs' figures."""
    estimate = sub.add_parser(
        "estimate",
        help="print what running suites would cost and take, from their last runs' figures, "
        "without running them (run prints the same line before it starts)",
    )
    estimate.add_argument("suites", nargs="+", metavar="SUITE", help=SUITES_HELP)
    estimate.add_argument(
        "--target", action="append", default=[], metavar="NAME", help="as for run"
    )
    estimate.add_argument(
        "--test-id", action="append", default=[], metavar="GLOB", help="as for run"
    )
    estimate.add_argument("--workers", type=int, metavar="N", help="as for run")
    estimate.add_argument("--budget", type=_usd, metavar="USD", help="as for run")
    estimate.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    estimate.add_argument(
        "--no-cache",
        action="store_true",
        help="count every case as run again (default: the cases whose stored results a run "
        "reuses cost nothing)",
    )
    estimate.set_defaults(func=cmd_estimate)


def _add_history(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`runs` and `compare`: the stored reports, listed and compared."""
    runs = sub.add_parser("runs", help="list the reports in the storage root, oldest first")
    runs.add_argument("--suite", metavar="NAME", help="only this suite")
    runs.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    runs.add_argument("--json", action="store_true", help="print the entries as JSON")
    runs.set_defaults(func=cmd_runs)

    compare = sub.add_parser(
        "compare",
        help="compare two reports of a suite: per-target McNemar and bootstrap, changed cases",
    )
    compare.add_argument(
        "run_a",
        nargs="?",
        metavar="RUN_A",
        help="the earlier run: a run id, a unique prefix of one, or a report folder (default: "
        "the report before the latest; with RUN_A alone, RUN_A against its previous report)",
    )
    compare.add_argument(
        "run_b", nargs="?", metavar="RUN_B", help="the later run (default: the latest)"
    )
    compare.add_argument("--suite", metavar="NAME", help="the suite, when several have reports")
    compare.add_argument("--storage", metavar="DIR", help="storage root (default as for run)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.set_defaults(func=cmd_compare)


def _add_view(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`view`: the runs list, the reports and comparisons, served over http."""
    view = sub.add_parser(
        "view",
        help="serve the runs list, every report and a compare page on http (as inspect view); "
        "Ctrl-C stops it",
    )
    view.add_argument("--storage", metavar="DIR|URL", help="storage root (default as for run)")
    view.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    view.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    view.set_defaults(func=cmd_view)


def _add_suite_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`validate`, `schema` and `register`: the suite files themselves."""
    validate = sub.add_parser(
        "validate", help="check suite files; errors name file:line:column and the fix"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="suite files or folders")
    validate.add_argument("--strict", action="store_true", help=STRICT_HELP)
    validate.set_defaults(func=cmd_validate)

    schema = sub.add_parser(
        "schema", help="print the JSON Schema of the suite format (for editors)"
    )
    schema.add_argument(
        "--targets", action="store_true", help="the schema of .agentv/targets.yaml instead"
    )
    schema.set_defaults(func=cmd_schema)

    register = sub.add_parser(
        "register", help="register a suite's cases as Dagster partitions without running"
    )
    register.add_argument("suites", nargs="+", metavar="SUITE", help=SUITES_HELP)
    register.set_defaults(func=cmd_register)


def _add_import(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`import`: existing agent session files turned into replay recordings."""
    importer = sub.add_parser(
        "import",
        help="turn an agent CLI's existing session files (any agent with a stream reader) into "
        "recordings a replay target grades without running an agent",
    )
    importer.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="an agent CLI's JSONL output (claude's stream-json, codex's exec --json, ...), or "
        "its own session file",
    )
    importer.add_argument(
        "--into", required=True, metavar="DIR", help="the replay target's sessions_dir"
    )
    importer.add_argument(
        "--test-id", metavar="ID", help="the test the session answers (default: the file name)"
    )
    importer.set_defaults(func=cmd_import)


def _add_assert(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`assert`: one grader run without an agent, as `agentv eval assert`."""
    asserter = sub.add_parser(
        "assert",
        help="run one grader without an agent (AgentV's `agentv eval assert`): a grader in "
        ".agentv/graders/ by name, or an assertion of a suite; exit 0 at score >= 0.5",
    )
    asserter.add_argument(
        "name",
        nargs="?",
        help="grader name (.agentv/graders/<name>.{ts,js,mts,mjs,py,sh}, searched upwards from "
        "here); with --suite, the assertion's name, type or 1-based number",
    )
    asserter.add_argument("--agent-output", metavar="TEXT", help="the agent's answer")
    asserter.add_argument("--agent-input", metavar="TEXT", help="the prompt it answered")
    asserter.add_argument("--file", metavar="FILE", help="a JSON file {output, input}")
    asserter.add_argument(
        "--session",
        metavar="FILE",
        help="a recorded session: a claude/codex/pi stream or an AgentV cli output file",
    )
    asserter.add_argument("--suite", metavar="FILE", help="take the assertion from this suite")
    asserter.add_argument("--test", metavar="ID", help="with --suite: the test")
    asserter.add_argument(
        "--target", metavar="NAME", help="with --suite: the target (default: first)"
    )
    asserter.add_argument(
        "--json", action="store_true", help="print the grader's result JSON, as agentv does"
    )
    asserter.set_defaults(func=cmd_assert)


def _add_model_server(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`model-server`: scripted model turns so the real agent CLIs run offline."""
    server = sub.add_parser(
        "model-server",
        help="serve scripted model turns (Anthropic, OpenAI Responses, Chat Completions) so the "
        "real agent CLIs run offline",
    )
    server.add_argument("--script", required=True, metavar="FILE", help="turn script (YAML/JSON)")
    server.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any)")
    server.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    server.add_argument("--log", metavar="FILE", help="log every request and reply as JSONL")
    server.set_defaults(func=cmd_model_server)


def _add_ui(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`ui`: the Dagster UI on the instance `run` uses here, and the reports beside it."""
    ui = sub.add_parser(
        "ui",
        help="open the Dagster UI on this project's instance, suites and storage (as `run` "
        "uses them), with `view` serving the reports its links open",
    )
    ui.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help=SUITES_HELP + " (default: $EVALS_PIPELINE_SUITES, else every suite under .)",
    )
    ui.add_argument("--targets", metavar="FILE", help="the targets file, as for run")
    ui.add_argument(
        "--storage",
        metavar="DIR",
        help="storage root (default: $EVALS_PIPELINE_STORAGE or .evals/storage)",
    )
    ui.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address of both servers (default {DEFAULT_HOST})"
    )
    ui.add_argument("--port", type=int, default=UI_PORT, help=f"the UI's port (default {UI_PORT})")
    ui.add_argument(
        "--view-port",
        type=int,
        default=DEFAULT_PORT,
        metavar="PORT",
        help=f"the reports' port (`evals-pipeline view`, default {DEFAULT_PORT})",
    )
    ui.add_argument(
        "--no-view",
        action="store_true",
        help="do not start `view` (the report links then go to $EVALS_PIPELINE_VIEW_URL)",
    )
    ui.set_defaults(func=cmd_ui)
