"""The `workspace` block: repos, hooks and cleanup, checked with file:line and resolved."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.workspaces.git import run_git
from evals_pipeline_tests.suites.conftest import Project, at_line, only


def make_repo(folder: Path) -> str:
    """A git repository with one commit; its commit id."""
    folder.mkdir(parents=True)
    (folder / "f.txt").write_text("v1\n")
    for args in (["init", "--quiet"], ["add", "--all"], ["commit", "--quiet", "-m", "one"]):
        run_git(args, cwd=folder)
    return run_git(["rev-parse", "HEAD"], cwd=folder).text


# --- resolving --------------------------------------------------------------------------------


def test_workspace_resolves_with_absolute_paths_and_hook_defaults(project: Project) -> None:
    make_repo(project.root / "evals/repos/lib")
    project.root.joinpath("evals/template").mkdir(parents=True)
    project.root.joinpath("evals/hooks").mkdir(parents=True)
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            workspace:
              template: template
              repos:
                - {path: vendor/lib, repo: repos/lib, base_commit: HEAD}
                - {path: remote, repo: "https://example.com/org/name.git", commit: v1.2}
              hooks:
                before_all: {command: [./setup.sh, "{{workspace_path}}"], cwd: hooks}
                after_each: {command: "make clean", timeout_ms: 5000}
              cleanup: always
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    workspace = resolve_cases(loaded)[0].workspace
    assert workspace is not None
    evals = project.root / "evals"
    assert workspace.template == str(evals / "template")
    assert [(r.path, r.source, r.commit) for r in workspace.repos] == [
        ("vendor/lib", str(evals / "repos/lib"), "HEAD"),
        ("remote", "https://example.com/org/name.git", "v1.2"),
    ]
    before_all, after_each = workspace.hooks.before_all, workspace.hooks.after_each
    assert before_all is not None and after_each is not None
    assert (before_all.cwd, before_all.timeout_ms) == (str(evals / "hooks"), 60_000)
    assert (after_each.cwd, after_each.timeout_ms) == (str(evals), 5000)
    assert workspace.hooks.before_each is None
    assert workspace.cleanup == "always"


def test_no_workspace_resolves_to_none_and_cleanup_defaults_to_on_success(
    project: Project,
) -> None:
    cases = resolve_cases(
        load_suite(
            project.write(
                "s.eval.yaml",
                """\
                tests:
                  - {id: a, input: hi, assertions: []}
                  - {id: b, input: hi, workspace: {hooks: {enabled: false, before_all: {command: "true"}}}, assertions: []}
                """,
            )
        )
    )
    assert cases[0].workspace is None and cases[0].workspace_template is None
    assert cases[1].workspace is not None
    assert cases[1].workspace.cleanup == "on_success"
    assert cases[1].workspace.hooks.before_all is None  # enabled: false


def test_content_hash_follows_the_workspace_spec(project: Project) -> None:
    def case_hash(workspace: str) -> str:
        text = f"workspace: {workspace}\ntests: [{{id: a, input: hi, assertions: []}}]\n"
        return resolve_cases(load_suite(project.write("s.eval.yaml", text)))[0].content_hash

    hashes = {
        case_hash("{cleanup: on_success}"),
        case_hash("{cleanup: never}"),
        case_hash("{hooks: {before_each: {command: 'true'}}}"),
        case_hash("{hooks: {before_each: {command: 'true', timeout_ms: 10}}}"),
    }
    assert len(hashes) == 4


# --- errors -----------------------------------------------------------------------------------


def test_missing_repo_folder_and_non_git_folder(project: Project) -> None:
    project.root.joinpath("plain").mkdir()
    issues = project.issues(
        "s.eval.yaml",
        """\
        workspace:
          repos:
            - path: a
              repo: ./missing
            - path: b
              repo: plain
        tests: [{id: a, input: hi, assertions: []}]
        """,
    )
    missing = at_line(issues, 4)
    assert (missing.column, missing.message) == (13, "repo './missing' not found")
    assert missing.fix.startswith(f"looked for {project.root / 'missing'}; correct the path")
    plain = at_line(issues, 6)
    assert plain.message == "repo 'plain' is not a git repository"
    assert "run 'git init' there" in plain.fix
    assert len(issues) == 2


def test_unknown_commit_is_reported_at_its_line(project: Project) -> None:
    make_repo(project.root / "lib")
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            workspace:
              repos:
                - {path: lib, repo: lib, commit: no-such-branch}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert issue.line == 3
    assert issue.message == "commit 'no-such-branch' not found in repo 'lib'"
    assert "git -C" in issue.fix


def test_commit_and_base_commit_must_match(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            workspace:
              repos:
                - path: lib
                  repo: lib
                  commit: main
                  base_commit: abc123
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert issue.line == 6
    assert issue.message == (
        "workspace.repos[0].base_commit: 'abc123' differs from commit 'main'; base_commit is "
        "an alias of commit: keep one of them"
    )


def test_repo_path_must_stay_inside_the_workspace(project: Project) -> None:
    issues = project.issues(
        "s.eval.yaml",
        """\
        workspace:
          repos:
            - {path: ../outside, repo: "file:///x"}
            - {path: ., repo: "file:///y"}
        tests: [{id: a, input: hi, assertions: []}]
        """,
    )
    assert "leaves the workspace" in at_line(issues, 3).message
    assert "is the workspace root" in at_line(issues, 4).message


def test_duplicate_repo_paths_and_template_conflicts(project: Project) -> None:
    project.root.joinpath("tpl/lib").mkdir(parents=True)
    project.root.joinpath("tpl/lib/x.txt").write_text("x")
    issues = project.issues(
        "s.eval.yaml",
        """\
        workspace:
          template: tpl
          repos:
            - {path: other, repo: "file:///a"}
            - {path: ./other, repo: "file:///b"}
            - {path: lib, repo: "file:///c"}
        tests: [{id: a, input: hi, assertions: []}]
        """,
    )
    assert at_line(issues, 5).message == "repos[0] already uses the path './other'"
    assert at_line(issues, 6).message.startswith("the workspace template already has 'lib'")


def test_missing_template_and_hook_cwd_in_a_test_workspace(project: Project) -> None:
    issues = project.issues(
        "s.eval.yaml",
        """\
        tests:
          - id: a
            workspace:
              template: nowhere
              hooks:
                after_all: {command: [echo], cwd: no-dir}
        """,
    )
    assert at_line(issues, 4).message == "workspace template folder 'nowhere' not found"
    hook = at_line(issues, 6)
    assert hook.message == "hook cwd 'no-dir' not found"
    assert hook.fix.startswith(f"looked for {project.root / 'no-dir'}")


def test_agentv_workspace_settings_are_accepted(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            workspace:
              isolation: shared
              mode: temp
              docker: {image: "python:3.12", timeout: 60, memory: 1g, cpus: 1}
              env: {required_commands: [sh], required_python_modules: [json]}
              hooks:
                after_each: {reset: fast}
                before_each: {script: [echo], timeoutMs: 500}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    workspace = loaded.suite.workspace
    assert workspace is not None and workspace.hooks is not None
    assert workspace.hooks.before_each is not None
    assert (workspace.hooks.before_each.command, workspace.hooks.before_each.timeout_ms) == (
        ["echo"],
        500,
    )
    assert "'script' is deprecated" in [w.message for w in loaded.warnings]


def test_unknown_workspace_key_suggests_the_right_one(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            workspace:
              hooks:
                before_eahc: {command: [echo]}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.column) == (3, 5)
    assert issue.message == "unknown key 'before_eahc' in workspace.hooks"
    assert issue.fix == "did you mean 'before_each'?"


def test_bad_cleanup_policy(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            workspace: {cleanup: on_failure}
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert issue.line == 1
    assert "'on_success', 'always' or 'never'" in issue.message


def test_a_github_shorthand_repo_is_cloned_from_github(project: Project) -> None:
    lib = project.root / "evals/vendor/lib"
    lib.mkdir(parents=True)
    (lib / "f.txt").write_text("x")
    for args in (["init", "--quiet"], ["add", "-A"], ["commit", "--quiet", "-m", "one"]):
        run_git(args, cwd=lib)
    (case,) = resolve_cases(
        load_suite(
            project.write(
                "evals/s.eval.yaml",
                """\
                workspace:
                  repos:
                    - {path: a, repo: EntityProcess/agentv-contract-fixture}
                    - {path: b, repo: vendor/lib}
                tests: [{id: a, input: hi, assertions: []}]
                """,
            )
        )
    )
    assert case.workspace is not None
    # As AgentV: org/name is GitHub's, unless a local folder of that name exists (ours).
    assert [r.source for r in case.workspace.repos] == [
        "https://github.com/EntityProcess/agentv-contract-fixture.git",
        str(project.root / "evals/vendor/lib"),
    ]
