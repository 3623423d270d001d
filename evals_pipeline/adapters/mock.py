"""The `mock` provider: a fixed response, to check suites and graders without an agent."""

from __future__ import annotations

import json

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import MockTarget
from evals_pipeline.process import now_ms


class MockAdapter:
    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        assert isinstance(case.target, MockTarget)
        start = now_ms()
        ctx.output_path.write_text(json.dumps({"text": case.target.response}))
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            output_file_path=str(ctx.output_path),
            exit_code=0,
            start_ms=start,
            end_ms=now_ms(),
            workspace_path=str(ctx.workspace),
        )
