"""Checks that everything a suite refers to exists: input files, file blocks, workspace
templates, repositories (and their commits), hook folders and grader scripts. Runs only on a
structurally valid suite."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from evals_pipeline.models.assertions import (
    AssertionSpec,
    CodeGraderAssertion,
    LlmGraderBase,
    PreprocessorSpec,
    walk_assertions,
)
from evals_pipeline.models.suite import (
    ContentBlock,
    EvalSuite,
    InputSpec,
    MessageSpec,
    RepoSpec,
    WorkspaceSpec,
)
from evals_pipeline.models.workspace import is_remote, workspace_relative
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.paths import absolute, find_input_file, search_dirs
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument
from evals_pipeline.workspaces.git import GitError, is_repository_root
from evals_pipeline.workspaces.repos import resolve_commit

_SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".ts", ".mjs", ".cjs", ".rb", ".pl")
# Only plain path characters: anything else (code for `python -c`, URLs, flags) is not a file.
_PATH_LIKE = re.compile(r"^[A-Za-z0-9_.\-/@+]+$")


def looks_like_script(arg: str) -> bool:
    """Whether a grader argv item is a relative path to a script that should exist."""
    if not _PATH_LIKE.match(arg) or arg.startswith(("-", "/")):
        return False
    return "/" in arg or arg.endswith(_SCRIPT_SUFFIXES)


class _Checker:
    def __init__(self, doc: YamlDocument, base_dir: Path) -> None:
        self.doc = doc
        self.base_dir = base_dir
        self.issues: list[SuiteIssue] = []

    def report(self, path: DataPath, message: str, fix: str) -> None:
        mark = self.doc.positions.value(path)
        self.issues.append(SuiteIssue(self.doc.file, mark.line, mark.column, message, fix))

    def searched(self) -> str:
        dirs = search_dirs(self.base_dir)
        if len(dirs) == 1:
            return f"looked in {dirs[0]}"
        return f"looked in {dirs[0]} and its parents up to {dirs[-1]}"

    def input_file(self, value: str, path: DataPath, what: str) -> None:
        if find_input_file(value, self.base_dir) is None:
            self.report(
                path,
                f"{what} '{value}' not found",
                f"{self.searched()}; correct the path (relative to the eval file's folder) "
                "or create the file",
            )

    def input_files(self, files: list[str], path: DataPath) -> None:
        for index, value in enumerate(files):
            self.input_file(value, (*path, index), "input file")

    def messages(self, spec: InputSpec | None, path: DataPath) -> None:
        if not isinstance(spec, list):
            return
        for m_index, message in enumerate(spec):
            if not isinstance(message, MessageSpec) or not isinstance(message.content, list):
                continue
            for b_index, block in enumerate(message.content):
                if isinstance(block, ContentBlock) and block.type in ("file", "image"):
                    at = (*path, m_index, "content", b_index, "value")
                    self.input_file(block.value, at, f"{block.type} block")

    def workspace(self, spec: WorkspaceSpec | None, path: DataPath) -> None:
        if spec is None:
            return
        template = self.workspace_template(spec.template, (*path, "template"))
        seen: dict[str, int] = {}
        for index, repo in enumerate(spec.repos):
            at = (*path, "repos", index)
            folder = workspace_relative(repo.path)
            if folder in seen:
                self.report(
                    (*at, "path"),
                    f"repos[{seen[folder]}] already uses the path '{repo.path}'",
                    "give each repo its own folder",
                )
            seen.setdefault(folder, index)
            if template is not None and _occupied(template / folder):
                self.report(
                    (*at, "path"),
                    f"the workspace template already has '{repo.path}'; a repo needs an empty "
                    "folder",
                    "choose another path, or remove that folder from the template",
                )
            self.repo(repo, at)
        hooks = spec.hooks
        for name in ("before_all", "before_each", "after_each", "after_all"):
            hook = getattr(hooks, name) if hooks else None
            if hook is not None and hook.cwd is not None:
                cwd = absolute(hook.cwd, self.base_dir)
                if not cwd.is_dir():
                    self.report(
                        (*path, "hooks", name, "cwd"),
                        f"hook cwd '{hook.cwd}' not found",
                        f"looked for {cwd}; create the folder or correct the path "
                        "(relative to the eval file's folder)",
                    )

    def workspace_template(self, template: str | None, path: DataPath) -> Path | None:
        if template is None:
            return None
        folder = absolute(template, self.base_dir)
        if not folder.is_dir():
            problem = "is a file, not a folder" if folder.exists() else "not found"
            self.report(
                path,
                f"workspace template folder '{template}' {problem}",
                f"looked for {folder}; create the folder or correct the path "
                "(relative to the eval file's folder)",
            )
            return None
        return folder

    def repo(self, repo: RepoSpec, path: DataPath) -> None:
        if is_remote(repo.repo):
            return  # reachable only when cloned: a bad URL is reported by the run
        source = absolute(repo.repo, self.base_dir)
        if not source.is_dir():
            shorthand = re.fullmatch(r"[\w.-]+/[\w.-]+", repo.repo)
            self.report(
                (*path, "repo"),
                f"repo '{repo.repo}' not found",
                f"looked for {source}; correct the path (relative to the eval file's folder) "
                + (
                    f"or, for GitHub, write repo: https://github.com/{repo.repo}.git"
                    if shorthand
                    else "or write a URL git can clone (https://…, git@host:org/name.git, file://…)"
                ),
            )
        elif not is_repository_root(source):
            self.report(
                (*path, "repo"),
                f"repo '{repo.repo}' is not a git repository",
                f"point repo at the top folder of a repository ({source} has no .git), or run "
                f"'git init' there and commit its files",
            )
        else:
            self.commit(repo, source, path)

    def commit(self, repo: RepoSpec, source: Path, path: DataPath) -> None:
        try:
            resolve_commit(source, repo.checkout)
        except GitError as exc:
            if exc.exit_code is None:
                return  # git itself is unavailable: the run will say so
            key = "commit" if repo.commit else "base_commit" if repo.base_commit else "repo"
            self.report(
                (*path, key),
                f"commit '{repo.checkout}' not found in repo '{repo.repo}'",
                f"use a commit, branch or tag that exists in {source} "
                f"(see: git -C {source} log --oneline)",
            )

    def graders(self, assertions: list[AssertionSpec], path: DataPath) -> None:
        for relative, assertion in walk_assertions(assertions):
            if isinstance(assertion, CodeGraderAssertion):
                self.code_grader(assertion, (*path, *relative))
            if isinstance(assertion, CodeGraderAssertion | LlmGraderBase):
                self.preprocessors(assertion.preprocessors, (*path, *relative, "preprocessors"))

    def preprocessors(self, specs: list[PreprocessorSpec], path: DataPath) -> None:
        """Each preprocessor's script (its command's last item) must exist, as AgentV requires."""
        for index, spec in enumerate(specs):
            script = spec.command[-1]
            if find_input_file(script, self.base_dir) is None:
                self.report(
                    (*path, index, "command"),
                    f"preprocessor script '{script}' not found",
                    "the command's last item must be a script file, found from the eval file's "
                    "folder up to the repository root; create it or correct the path",
                )

    def code_grader(self, grader: CodeGraderAssertion, path: DataPath) -> None:
        cwd = absolute(grader.cwd, self.base_dir) if grader.cwd else self.base_dir
        if not cwd.is_dir():
            self.report(
                (*path, "cwd"),
                f"grader cwd '{grader.cwd}' not found",
                f"looked for {cwd}; create the folder or correct the path "
                "(relative to the eval file's folder)",
            )
            return
        if isinstance(grader.command, list):
            argv = [(arg, (*path, "command", i)) for i, arg in enumerate(grader.command)]
        else:
            try:
                argv = [(arg, (*path, "command")) for arg in shlex.split(grader.command)]
            except ValueError:
                argv = []  # unbalanced quotes: the shell will say so when it runs
        for arg, at in argv:
            if looks_like_script(arg) and not (cwd / arg).exists():
                relative_to = "the grader's cwd" if grader.cwd else "the eval file's folder"
                self.report(
                    at,
                    f"grader script '{arg}' not found",
                    f"looked for {absolute(arg, cwd)}; create it or correct the path "
                    f"(relative to {relative_to})",
                )


def _occupied(path: Path) -> bool:
    return path.is_file() or (path.is_dir() and any(path.iterdir()))


def missing_references(suite: EvalSuite, doc: YamlDocument, base_dir: Path) -> list[SuiteIssue]:
    """Issues for every file, folder or script the suite names that does not exist."""
    check = _Checker(doc, base_dir)
    check.input_files(suite.input_files, ("input_files",))
    check.messages(suite.input, ("input",))
    check.workspace(suite.workspace, ("workspace",))
    check.graders(suite.assertions, ("assertions",))
    check.preprocessors(suite.preprocessors, ("preprocessors",))
    for index, test in enumerate(suite.tests):
        at: DataPath = ("tests", index)
        check.input_files(test.input_files, (*at, "input_files"))
        check.messages(test.input, (*at, "input"))
        check.messages(test.expected_output, (*at, "expected_output"))
        check.workspace(test.workspace, (*at, "workspace"))
        check.graders(test.assertions, (*at, "assertions"))
    return check.issues
