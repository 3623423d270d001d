"""A workspace's final state kept and restored: symlinks kept as symlinks (never followed), the
`.git` pointer files left out, a nested repository kept, modes private, the size cap."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals_pipeline.settings import Settings
from evals_pipeline.workspaces.final_state import (
    MAX_MB_VAR,
    WorkspaceStateSettingError,
    archive_workspace,
    max_state_bytes,
    restore_workspace,
)


@pytest.fixture
def private_umask() -> Iterator[None]:
    """The runner's default umask (077), as the CLI sets it."""
    old = os.umask(0o077)
    yield
    os.umask(old)


@pytest.mark.usefixtures("private_umask")
def test_a_kept_state_restores_the_workspace_as_it_was(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "big").mkdir(parents=True)
    (outside / "big" / "data.bin").write_bytes(b"x" * 10_000)
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hi')\n")
    os.chmod(ws / "src" / "main.py", 0o755)
    (ws / ".git").write_text("gitdir: ../.ws.state/baseline.git\n")  # the baseline pointer
    (ws / "repo" / ".git").mkdir(parents=True)  # the agent's own repository
    (ws / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "link.txt").symlink_to("src/main.py")
    (ws / "outside").symlink_to(outside / "big")  # not followed: its 10 KB are not kept
    archive = tmp_path / "store" / "workspace-k.tar.gz"

    kept = archive_workspace(ws, archive, max_bytes=1000, scrub=lambda b: b.replace(b"hi", b"**"))
    assert archive.stat().st_mode & 0o077 == 0
    assert kept.kept and kept.state_bytes < 1000 and kept.archive_bytes == archive.stat().st_size

    into = tmp_path / "restored"
    into.mkdir()
    restore_workspace(archive, into)
    assert (into / "src" / "main.py").read_text() == "print('**')\n"
    assert (into / "src" / "main.py").stat().st_mode & 0o777 == 0o700  # the umask's bits off
    assert not (into / ".git").exists()
    assert (into / "repo" / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert os.readlink(into / "link.txt") == "src/main.py"
    assert os.readlink(into / "outside") == str(outside / "big")


def test_a_state_over_the_cap_is_not_kept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"a" * 2048)
    archive = tmp_path / "workspace-k.tar.gz"
    kept = archive_workspace(ws, archive, max_bytes=1024)
    assert not kept.kept and not archive.exists()
    assert kept.not_kept == f"its files take 2.0 KB, over the 1.0 KB cap ({MAX_MB_VAR})"


def test_the_cap_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAX_MB_VAR, raising=False)
    assert max_state_bytes() == 256 * 1024 * 1024
    monkeypatch.setenv(MAX_MB_VAR, "0.5")
    assert max_state_bytes() == 256 * 1024 * 1024, "the process's settings are read once"
    Settings.reload()
    assert max_state_bytes() == 512 * 1024
    assert max_state_bytes(Settings.from_env({MAX_MB_VAR: "1"})) == 1024 * 1024
    with pytest.raises(WorkspaceStateSettingError, match="not a number of megabytes"):
        max_state_bytes(Settings.from_env({MAX_MB_VAR: "lots"}))
