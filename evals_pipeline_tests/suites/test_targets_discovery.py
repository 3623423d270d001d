"""Which targets file a suite uses, searched as `agentv eval` searches (apps/cli utils/targets.ts):
targets.yaml, targets.yml, .agentv/targets.yaml, .agentv/targets.yml in the eval file's folder,
then each parent up to the repository root, then the working folder; and the keys of a target
that AgentV does not read, ignored with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.models.targets import CliTarget
from evals_pipeline.suites import load_suite
from evals_pipeline.suites.target_catalog import (
    TARGETS_ENV,
    explicit_targets_file,
    find_targets_file,
    targets_search_dirs,
)
from evals_pipeline_tests.suites.conftest import Project, only

SUITE = "tests: [{id: a, input: hi, assertions: []}]\n"


def mock(name: str) -> str:
    return f"targets: [{{name: {name}, provider: mock}}]\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A repository (its root holds `.git`) inside an outer folder, run from its root; no
    targets file anywhere yet."""
    root = tmp_path / "outer" / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv(TARGETS_ENV, raising=False)
    return Project(root)


def agents(path: Path) -> list[str]:
    return list(load_suite(path).targets)


def test_in_one_folder_targets_yaml_comes_first(repo: Project) -> None:
    suite = repo.write("evals/s.eval.yaml", SUITE)
    repo.write("evals/.agentv/targets.yml", mock("agentv-yml"))
    assert agents(suite) == ["agentv-yml"]
    repo.write("evals/.agentv/targets.yaml", mock("agentv-yaml"))
    assert agents(suite) == ["agentv-yaml"]
    repo.write("evals/targets.yml", mock("plain-yml"))
    assert agents(suite) == ["plain-yml"]
    repo.write("evals/targets.yaml", mock("plain-yaml"))
    assert agents(suite) == ["plain-yaml"]
    assert load_suite(suite).targets_file == repo.root / "evals/targets.yaml"


def test_a_nearer_folder_wins_over_a_preferred_name_further_up(repo: Project) -> None:
    suite = repo.write("evals/deep/s.eval.yaml", SUITE)
    repo.write("targets.yaml", mock("root"))
    repo.write("evals/.agentv/targets.yml", mock("near"))
    assert agents(suite) == ["near"]


def test_the_search_stops_at_the_git_root(repo: Project) -> None:
    suite = repo.write("evals/s.eval.yaml", SUITE)
    repo.write("../targets.yaml", mock("outside"))  # above the repository: never read
    repo.write("../.agentv/targets.yaml", mock("outside"))
    assert find_targets_file(suite) is None
    assert targets_search_dirs(suite) == [repo.root / "evals", repo.root]
    issue = only(load_suite(suite).run_issues)
    assert issue.message == (
        "no targets file: looked for targets.yaml, targets.yml, .agentv/targets.yaml, "
        f".agentv/targets.yml in {repo.root / 'evals'}, {repo.root}"
    )
    assert "--targets FILE" in issue.fix


def test_the_working_folder_is_searched_last(
    repo: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = repo.write("evals/s.eval.yaml", SUITE)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".agentv").mkdir(parents=True)
    (elsewhere / ".agentv/targets.yaml").write_text(mock("from-cwd"))
    monkeypatch.chdir(elsewhere)  # the repository root is now the working folder itself
    assert targets_search_dirs(suite)[-1] == elsewhere
    assert agents(suite) == ["from-cwd"]
    repo.write("targets.yaml", mock("in-repo"))  # on the eval file's chain: comes first
    assert agents(suite) == ["in-repo"]


def test_the_root_of_the_working_folder_bounds_the_search(
    repo: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # AgentV's root is the working folder's repository: an eval file outside it is searched
    # up to `/`, then the root, then the working folder.
    other = tmp_path / "other"
    suite = other / "s.eval.yaml"
    other.mkdir()
    suite.write_text(SUITE)
    (tmp_path / "targets.yaml").write_text(mock("above-the-file"))
    assert agents(suite) == ["above-the-file"]
    dirs = targets_search_dirs(suite)
    assert dirs[:3] == [other, tmp_path, tmp_path.parent]
    assert dirs[-1] == repo.root
    assert Path("/") in dirs


def test_a_chosen_targets_file_overrides_the_search(
    repo: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = repo.write("evals/s.eval.yaml", SUITE)
    repo.write("evals/targets.yaml", mock("found"))
    chosen = tmp_path / "conf" / "my-targets.yaml"
    chosen.parent.mkdir()
    chosen.write_text(mock("chosen"))
    assert explicit_targets_file(str(chosen)) == chosen
    monkeypatch.setenv(TARGETS_ENV, str(chosen))
    assert agents(suite) == ["chosen"]


def test_a_chosen_folder_is_searched_for_the_file_names(repo: Project) -> None:
    repo.write("conf/.agentv/targets.yml", mock("x"))
    assert explicit_targets_file(str(repo.root / "conf")) == repo.root / "conf/.agentv/targets.yml"
    assert explicit_targets_file("conf") == repo.root / "conf/.agentv/targets.yml"
    assert explicit_targets_file("nowhere.yaml") is None


def test_a_plain_targets_yaml_resolves_paths_from_its_own_folder(repo: Project) -> None:
    (repo.root / "evals/sessions").mkdir(parents=True)
    repo.write(
        "evals/targets.yaml",
        "targets: [{name: r, provider: replay, sessions_dir: sessions}]\n",
    )
    loaded = load_suite(repo.write("evals/s.eval.yaml", SUITE))
    target = loaded.targets["r"]
    assert getattr(target, "sessions_dir", None) == str(repo.root / "evals/sessions")


def test_a_key_agentv_does_not_read_is_a_warning_not_an_error(repo: Project) -> None:
    targets = repo.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: agent
            provider: cli
            command: echo hi > {OUTPUT_FILE}
            timeout_ms: 5000
            healthcheck:
              command: "true"
              retries: 3
        """,
    )
    loaded = load_suite(repo.write("s.eval.yaml", SUITE))
    assert loaded.run_issues == []
    target = loaded.targets["agent"]
    assert isinstance(target, CliTarget) and target.command == "echo hi > {OUTPUT_FILE}"
    warnings = [w for w in loaded.warnings if w.file == str(targets)]
    assert [(w.line, w.column) for w in warnings] == [(5, 5), (8, 7)]
    assert warnings[0].message == (
        "unknown field 'timeout_ms' in targets[0], ignored (did you mean 'timeout_seconds'?)"
    )
    assert "'retries'" in warnings[1].message


def test_an_unset_variable_in_a_target_the_suite_runs_is_a_warning(
    repo: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_AGENT_MODEL", raising=False)
    monkeypatch.delenv("NOT_SET_OTHER", raising=False)
    targets = repo.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: agent
            provider: cli
            command: echo ${{ NOT_SET_AGENT_MODEL }} > {OUTPUT_FILE}
          - name: unused
            provider: cli
            command: echo ${{ NOT_SET_OTHER }} > {OUTPUT_FILE}
        """,
    )
    loaded = load_suite(
        repo.write(
            "s.eval.yaml",
            "execution: {target: agent}\ntests: [{id: a, input: hi, assertions: []}]\n",
        )
    )
    warning = only([w for w in loaded.warnings if w.file == str(targets)])
    assert (warning.line, warning.column) == (4, 14)
    assert "${{ NOT_SET_AGENT_MODEL }} is not set" in warning.message
