"""An agent run on a resolved case: the adapter of its target's provider, inside the workspace
lifecycle, with fallback targets and secrets redacted."""

from __future__ import annotations

from dataclasses import replace

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.adapters.conversation import run_conversation
from evals_pipeline.adapters.identity import agent_version, target_auth
from evals_pipeline.agents.registry import ADAPTERS
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.process import now_ms
from evals_pipeline.secrets import run_redactor
from evals_pipeline.workspaces import (
    HookContext,
    WorkspaceSetupError,
    file_changes,
    finish_workspace,
    prepare_workspace,
)


def run_agent(case: ResolvedCase, ctx: RunContext) -> AgentRun:
    """Run `case` once in a fresh workspace with the adapter of its target's provider.

    The workspace lifecycle wraps the agent: setup hooks and the git baseline before, the diff
    (file_changes) and teardown hooks after. A failed setup is recorded, never raised.
    """
    ctx.artifacts.mkdir(parents=True, exist_ok=True)
    hooks = HookContext.for_case(case, ctx.run_id)
    start = now_ms()
    try:
        prepared = prepare_workspace(
            case.workspace,
            ctx.workspace,
            hooks,
            git_cache=ctx.git_cache or ctx.artifacts.parent / ".git-cache",
            target_hooks=case.target_hooks,
        )
    except WorkspaceSetupError as exc:
        setup_error = AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            start_ms=start,
            end_ms=now_ms(),
            error=f"workspace setup failed: {exc}",
            setup_failed=True,
            workspace_path=str(ctx.workspace),
        )
        return run_redactor().model(setup_error)
    run = _run_target(case, ctx)
    for index, fallback in enumerate(case.fallbacks, 1):
        if run.error is None:
            break
        # AgentV's fallback_targets: the next target, same workspace and prompt.
        fallback_case = case.model_copy(update={"target": fallback, "fallbacks": []})
        fallback_ctx = replace(ctx, artifacts=ctx.artifacts / f"fallback-{index}")
        fallback_ctx.artifacts.mkdir(parents=True, exist_ok=True)
        failed = run.error
        run = _run_target(fallback_case, fallback_ctx)
        if run.error is None:
            note = f"served by fallback target {fallback.name!r}; {case.target.name!r}: {failed}"
            run = run.model_copy(
                update={"served_by": fallback.name, "warnings": [*run.warnings, note]}
            )
    changes = file_changes(prepared)
    warnings = finish_workspace(prepared, hooks)
    run = run.model_copy(update={"file_changes": changes, "warnings": [*run.warnings, *warnings]})
    # Secrets the suite interpolated (a key in a command, a token in a prompt) and those of the
    # environment leave no trace in what is stored: prompt, stdout, output file, side files.
    redactor = run_redactor()
    redactor.tree(ctx.artifacts, skip=[ctx.workspace])
    return redactor.model(run)


def _run_target(case: ResolvedCase, ctx: RunContext) -> AgentRun:
    adapter = ADAPTERS[case.target.provider]
    # Probed before the run (memoized): the version of the CLI as the run starts.
    version = agent_version(case.target, case.base_dir)
    auth = target_auth(case.target)
    if case.conversation is not None:
        run = run_conversation(case, ctx, adapter)
    else:
        run = adapter.run(case, ctx)
    return run.model_copy(
        update={"agent_version": version, "auth": auth.describe() if auth else None}
    )
