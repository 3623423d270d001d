"""Codex CLI's JSONL into the canonical event model.

`codex exec --json` prints items (messages, command executions, file changes) and per-turn
usage, but no model, timing or exact tool call. Codex's own session log, the rollout file
(`$CODEX_HOME/sessions/.../rollout-*.jsonl`), has all of that; given with the stdout it fills
those gaps, and alone it is a complete session (for importing past runs).
Reference: agent-clis.md sec 5.

| module | holds |
|---|---|
| `exec_stream.py` | `parse_codex`: `exec --json` stdout, paired with the rollout's records |
| `rollout.py` | `parse_codex_rollout`, `is_rollout`: the rollout file read into records |
| `records.py` | what the rollout records, and how records become events |
| `fields.py` | usage, shell commands, tool-call families and statuses, typed values |
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.enrichers.codex.exec_stream import parse_codex
    from evals_pipeline.enrichers.codex.fields import AGENT_KIND, Family, codex_usage, unwrap_shell
    from evals_pipeline.enrichers.codex.rollout import (
        ROLLOUT_LINE_TYPES,
        is_rollout,
        parse_codex_rollout,
    )

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "AGENT_KIND": "fields",
    "Family": "fields",
    "ROLLOUT_LINE_TYPES": "rollout",
    "codex_usage": "fields",
    "is_rollout": "rollout",
    "parse_codex": "exec_stream",
    "parse_codex_rollout": "rollout",
    "unwrap_shell": "fields",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "AGENT_KIND",
    "ROLLOUT_LINE_TYPES",
    "Family",
    "codex_usage",
    "is_rollout",
    "parse_codex",
    "parse_codex_rollout",
    "unwrap_shell",
]
