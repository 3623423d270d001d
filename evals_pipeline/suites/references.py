"""Checks that everything a suite refers to exists: input files, file blocks, workspace
templates, repositories (and their commits), hook folders and preprocessor scripts. Runs only on
a structurally valid suite. Grader scripts and their `cwd` are not checked here: as in AgentV, a missing one is the
error of each case that runs the grader, with the grader's stderr.

Input files follow AgentV 4.42.4: `agentv validate` rejects a missing `type: file` block only in
the `input` and `expected_output` message lists of a test written in the eval file itself
(validation/file-reference-validator.ts), so only those are errors. Any other missing input file
(suite input, `input_files`, image blocks, tests from other files) is a warning: AgentV's loader
leaves it out of the test, and so does MessageBuilder.

An input file or block that resolves outside the eval file's repository is an error unless the
suite allows it (file_boundary.py): AgentV reads it, but its contents would reach the report."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

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
from evals_pipeline.suites.file_boundary import FIX, file_boundary, outside, outside_message
from evals_pipeline.suites.paths import absolute, find_input_file, find_repo_source, search_dirs
from evals_pipeline.suites.probes import exists, folder_names, is_dir, is_file, probed
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument


class _Checker:
    def __init__(
        self,
        doc: YamlDocument,
        base_dir: Path,
        warnings: list[SuiteIssue],
        boundary: Path | None = None,
    ) -> None:
        self.doc = doc
        self.base_dir = base_dir
        self.issues: list[SuiteIssue] = []
        self.warnings = warnings
        self.boundary = boundary  # None: input files may resolve anywhere

    def report(self, path: DataPath, message: str, fix: str) -> None:
        self.issues.append(self.at(path, message, fix))

    def warn(self, path: DataPath, message: str, fix: str) -> None:
        self.warnings.append(self.at(path, message, fix))

    def at(self, path: DataPath, message: str, fix: str) -> SuiteIssue:
        mark = self.doc.positions.value(path)
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, message, fix)

    def written_here(self, path: DataPath) -> bool:
        """Whether the node at `path` is written in the eval file itself (not spliced in from
        a tests file or a file:// entry) and AgentV's validator reads it: it parses the eval
        file as YAML, which a JSONL suite is not."""
        mark = self.doc.positions.value(path)
        here = mark.file is None or mark.file == self.doc.file
        return here and not self.doc.file.endswith(".jsonl")

    def searched(self) -> str:
        dirs = search_dirs(self.base_dir)
        chain = 1  # the eval file's folder and its parents, then the root and the working folder
        while chain < len(dirs) and dirs[chain] == dirs[chain - 1].parent:
            chain += 1
        said = f"looked in {dirs[0]}"
        if chain > 1:
            said += f" and its parents up to {dirs[chain - 1]}"
        rest = [str(d) for d in dirs[chain:]]
        return said + (f", then in {', '.join(rest)}" if rest else "")

    def input_file(self, value: str, path: DataPath, what: str, *, rejected: bool) -> None:
        """A missing input file: an error where `agentv validate` rejects it (`rejected`),
        else a warning that it is left out of the test, as AgentV's loader leaves it out.
        One found outside the repository is an error unless the suite allows it."""
        found = find_input_file(value, self.base_dir)
        if found is not None:
            real = outside(found, self.boundary) if self.boundary is not None else None
            if real is not None and self.boundary is not None:
                self.report(path, outside_message(what, value, real, self.boundary), FIX)
            return
        fix = (
            f"{self.searched()}; correct the path (relative to the eval file's folder) "
            "or create the file"
        )
        if rejected:
            self.report(path, f"{what} '{value}' not found", fix)
        else:
            self.warn(
                path, f"{what} '{value}' not found: it is left out, as AgentV leaves it out", fix
            )

    def input_files(self, files: list[str], path: DataPath) -> None:
        for index, value in enumerate(files):
            self.input_file(value, (*path, index), "input file", rejected=False)

    def messages(self, spec: InputSpec | None, path: DataPath, *, validated: bool) -> None:
        """The file and image blocks of input or expected messages. `validated`: AgentV's
        validator checks this message list, where it rejects a missing file block (never an
        image block)."""
        for at, block in _blocks(spec, path):
            rejected = validated and block.type == "file"
            self.input_file(block.value, (*at, "value"), f"{block.type} block", rejected=rejected)

    def workspace(self, spec: WorkspaceSpec | None, path: DataPath) -> None:
        if spec is None:
            return
        template = self.workspace_template(spec.template, (*path, "template"))
        seen: dict[str, int] = {}
        for index, repo in enumerate(spec.repos or []):
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
                if not is_dir(cwd):
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
        if not is_dir(folder):
            problem = "is a file, not a folder" if exists(folder) else "not found"
            self.report(
                path,
                f"workspace template folder '{template}' {problem}",
                f"looked for {folder}; create the folder or correct the path "
                "(relative to the eval file's folder)",
            )
            return None
        for link, target in _links_leaving(folder):
            self.report(
                path,
                f"workspace template '{template}' has a symlink {link.relative_to(folder)} that "
                f"points outside the template (to {target}): an agent could reach outside its "
                "workspace through it",
                "replace the link with a copy of what it points to, or point it at a file "
                "inside the template",
            )
        return folder

    def repo(self, repo: RepoSpec, path: DataPath) -> None:
        if is_remote(find_repo_source(repo.repo, self.base_dir)):
            return  # reachable only when cloned (org/name is GitHub's): the run reports a bad one
        source = absolute(repo.repo, self.base_dir)
        if not is_dir(source):
            self.report(
                (*path, "repo"),
                f"repo '{repo.repo}' not found",
                f"looked for {source}; correct the path (relative to the eval file's folder) "
                "or write a URL git can clone (https://…, git@host:org/name.git, file://…) or "
                "a GitHub org/name",
            )
        elif not _is_repository_root(source):
            self.report(
                (*path, "repo"),
                f"repo '{repo.repo}' is not a git repository",
                f"point repo at the top folder of a repository ({source} has no .git), or run "
                f"'git init' there and commit its files",
            )
        else:
            self.commit(repo, source, path)

    def commit(self, repo: RepoSpec, source: Path, path: DataPath) -> None:
        if _commit_missing(source, repo.checkout):
            key = "commit" if repo.commit else "base_commit" if repo.base_commit else "repo"
            self.report(
                (*path, key),
                f"commit '{repo.checkout}' not found in repo '{repo.repo}'",
                f"use a commit, branch or tag that exists in {source} "
                f"(see: git -C {source} log --oneline)",
            )

    def grader_preprocessors(self, assertions: list[AssertionSpec], path: DataPath) -> None:
        for relative, assertion in walk_assertions(assertions):
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
                    f"the command's last item must be a script file: {self.searched()}; create "
                    "it or correct the path",
                )


@probed  # a link added or removed later changes the answer
def _links_leaving(folder: Path) -> tuple[tuple[Path, str], ...]:
    # Imported here, as below: the workspaces package is needed only by suites with templates.
    from evals_pipeline.workspaces.template import links_leaving

    return tuple(links_leaving(folder))


@probed
def _is_repository_root(folder: Path) -> bool:
    # Imported here: the workspaces package (~0.1 s) is needed only by suites naming repos.
    from evals_pipeline.workspaces.git import is_repository_root

    return is_repository_root(folder)


@probed  # git's answer: a commit made later resolves
def _commit_missing(source: Path, checkout: str) -> bool:
    """Whether `checkout` names no commit in the repository at `source` (False when git itself
    is unavailable: the run will say so)."""
    from evals_pipeline.workspaces.git import GitError
    from evals_pipeline.workspaces.repos import resolve_commit

    try:
        resolve_commit(source, checkout)
    except GitError as exc:
        return exc.exit_code is not None
    return False


def _occupied(path: Path) -> bool:
    return is_file(path) or (is_dir(path) and bool(folder_names(path)))


def _blocks(spec: InputSpec | None, path: DataPath) -> list[tuple[DataPath, ContentBlock]]:
    """Each file or image block of a message list, or of one message written as an object
    (which MessageBuilder reads as a message when it is a valid one), with its data path."""
    messages: list[tuple[DataPath, MessageSpec | str]]
    if isinstance(spec, list):
        messages = [((*path, index), message) for index, message in enumerate(spec)]
    elif isinstance(spec, dict):
        try:
            messages = [(path, MessageSpec.model_validate(spec))]
        except ValidationError:
            return []  # structured content, not a message: it holds no blocks
    else:
        return []
    return [
        ((*at, "content", index), block)
        for at, message in messages
        if isinstance(message, MessageSpec) and isinstance(message.content, list)
        for index, block in enumerate(message.content)
        if isinstance(block, ContentBlock) and block.type in ("file", "image")
    ]


def missing_references(
    suite: EvalSuite, doc: YamlDocument, base_dir: Path, warnings: list[SuiteIssue]
) -> list[SuiteIssue]:
    """Issues for every file, folder or script the suite names that does not exist, and for
    input files outside the eval file's repository; missing input files that AgentV leaves out
    of a test instead go to `warnings`."""
    boundary = None if suite.allow_outside_files else file_boundary(base_dir)
    check = _Checker(doc, base_dir, warnings, boundary)
    check.input_files(suite.input_files, ("input_files",))
    check.messages(suite.input, ("input",), validated=False)
    check.workspace(suite.workspace, ("workspace",))
    check.grader_preprocessors(suite.assertions, ("assertions",))
    check.preprocessors(suite.preprocessors, ("preprocessors",))
    for index, test in enumerate(suite.tests):
        at: DataPath = ("tests", index)
        check.input_files(test.input_files, (*at, "input_files"))
        # AgentV's validator reads the eval file's own tests and only their message lists.
        validated = check.written_here(at)
        check.messages(
            test.input, (*at, "input"), validated=validated and isinstance(test.input, list)
        )
        check.messages(
            test.expected_output,
            (*at, "expected_output"),
            validated=validated and isinstance(test.expected_output, list),
        )
        check.workspace(test.workspace, (*at, "workspace"))
        check.grader_preprocessors(test.assertions, (*at, "assertions"))
    return check.issues
