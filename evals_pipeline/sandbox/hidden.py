"""What no sandboxed child may read although the host is readable: the credential stores tools
keep in the user's home (SSH and cloud keys, registry tokens, agents' logins), and the `.env`
files suites were loaded with (they hold the keys the runner withholds from its children)."""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterable
from pathlib import Path

from evals_pipeline.secrets import env_files

CREDENTIAL_STORES: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".config/pip/pip.conf",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/hub",
    ".local/share/keyrings",
    ".password-store",
    ".config/anthropic",
    ".config/openai",
)
"""Relative to a home folder: where common tools keep logins, tokens and private keys. The
agents' own (`.claude`, `.codex`, an installed agent's) are each agent's to say: see
`register_agent_logins`."""

_AGENT_LOGINS: dict[str, None] = {}
"""The agents' login stores registered so far, relative to a home folder, in order."""


def register_agent_logins(stores: Iterable[str]) -> None:
    """Hide `stores` (relative to a home folder) from every sandboxed child too. The agent
    registry registers every agent's logins when it loads (`AgentKind.login_stores`): sandbox/
    cannot ask it, since the adapters the registry imports run their children through here."""
    _AGENT_LOGINS.update(dict.fromkeys(stores))


def credential_stores() -> tuple[str, ...]:
    """Every credential store hidden from sandboxed children: the common tools' and the agents'
    registered so far."""
    return (*CREDENTIAL_STORES, *_AGENT_LOGINS)


def user_homes() -> set[Path]:
    """The runner's home folders: its `HOME`, and its user's home in the password database."""
    homes = {Path(os.environ["HOME"])} if os.environ.get("HOME") else set()
    with contextlib.suppress(KeyError):  # a uid with no entry (some containers)
        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return {home for home in homes if home != Path("/")}


def hidden_paths(*, user_home_visible: bool) -> tuple[Path, ...]:
    """The existing paths a sandboxed child must not read: the `.env` files suites loaded, and
    the credential stores of the runner's homes unless the child was given that home on purpose
    (`home: user`)."""
    found = [Path(file) for file in env_files()]
    if not user_home_visible:
        found += [home / store for home in user_homes() for store in credential_stores()]
    return tuple(path for path in found if os.path.lexists(path))
