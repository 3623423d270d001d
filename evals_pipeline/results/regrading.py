"""Whether a case can be graded again from its stored sessions alone, without the workspaces
its runs left, and the workspaces' kept final states restored for a re-grade: a changed grader
then re-grades a stored run whose workspace was cleaned up, instead of running its agent again."""

from __future__ import annotations

import tempfile
from pathlib import Path

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.models.assertions.code_grader import CodeGraderAssertion
from evals_pipeline.models.assertions.composite import CodeAggregator
from evals_pipeline.models.assertions.custom import CustomAssertion
from evals_pipeline.models.assertions.llm_grader import LlmGraderBase
from evals_pipeline.models.assertions.spec import CompositeAssertion, walk_assertions
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.session import Session
from evals_pipeline.results.keys import CaseKeys
from evals_pipeline.results.store import ResultStore
from evals_pipeline.workspaces.final_state import restore_workspace
from evals_pipeline.workspaces.lifecycle import remove_workspace


def reads_workspace(case: ResolvedCase) -> bool:
    """Whether a grader of `case` may read a run's workspace: a code or custom grader (handed
    its path), a composite's code aggregator, an LLM grader with preprocessors or a prompt
    command (scripts run with it), or one reading file blocks of an answer when the suite has a
    workspace (their paths resolve there); a conversation's turns are not looked into. The
    other graders read only the stored session: its answer, trace, metrics and diff."""
    if case.conversation is not None:
        return True
    for _, assertion in walk_assertions(case.assertions):
        if isinstance(assertion, CodeGraderAssertion | CustomAssertion):
            return True
        if isinstance(assertion, CompositeAssertion) and isinstance(
            assertion.aggregator, CodeAggregator
        ):
            return True
        if isinstance(assertion, LlmGraderBase) and (
            assertion.preprocessors
            or assertion.prompt_command is not None
            or case.workspace is not None
        ):
            return True
    return False


class RestoredWorkspaces:
    """The kept final states of a case's deleted workspaces (ResultStore.keep_workspace),
    restored for a re-grade into fresh temporary folders that graders get as the workspace,
    and deleted on leaving the block."""

    def __init__(self, store: ResultStore | None, case: ResolvedCase, keys: CaseKeys | None):
        self.store = store
        self.case = case
        self.keys = keys
        self._folders: list[Path] = []

    def __enter__(self) -> RestoredWorkspaces:
        return self

    def __exit__(self, *_: object) -> None:
        for folder in self._folders:
            remove_workspace(folder)

    def live(
        self, session: Session, ctx: GradingContext | None
    ) -> tuple[Session, GradingContext | None]:
        """`session` (and its prepared `ctx`) with a workspace graders can read: its own, or
        its kept state restored when its workspace is gone and a grader may read it."""
        path = session.workspace_path
        if (
            self.store is None
            or self.keys is None
            or path is None
            or session.status != "ok"
            or Path(path).exists()
            or not reads_workspace(self.case)
        ):
            return session, ctx
        run_key = self.keys.run(session.trial)
        kept = self.store.workspace_state(self.case.case_key, self.case.agent, run_key)
        if kept is None or not kept.kept:
            return session, ctx
        folder = Path(tempfile.mkdtemp(prefix="evals-workspace-")) / "workspace"
        self._folders.append(folder.parent)
        folder.mkdir()
        restore_workspace(
            self.store.state_archive(self.case.case_key, self.case.agent, run_key), folder
        )
        live = session.model_copy(update={"workspace_path": str(folder)})
        if ctx is not None:
            ctx.session = live
        return live, ctx
