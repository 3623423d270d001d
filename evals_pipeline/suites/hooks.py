"""Hook specs as they run: absolute cwd and AgentV's default timeouts (workspace and target hooks)."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.models.suite import HookSpec, HooksSpec
from evals_pipeline.models.workspace import (
    DEFAULT_SETUP_TIMEOUT_MS,
    DEFAULT_TEARDOWN_TIMEOUT_MS,
    ResolvedHook,
    ResolvedHooks,
)
from evals_pipeline.suites.paths import absolute


def resolve_hooks(spec: HooksSpec | None, base_dir: Path) -> ResolvedHooks:
    """The four hooks of `spec` ready to run; none when `spec` is absent or `enabled: false`."""
    hooks = spec or HooksSpec()

    def hook(hook_spec: HookSpec | None, default_timeout_ms: int) -> ResolvedHook | None:
        if hook_spec is None or not hooks.enabled:
            return None
        if hook_spec.command is None and hook_spec.reset in (None, "none"):
            return None  # nothing to run: AgentV drops such a hook
        return ResolvedHook(
            command=hook_spec.command,
            timeout_ms=hook_spec.timeout_ms or default_timeout_ms,
            # AgentV's rule: hooks run from the eval file's folder unless they say otherwise
            # (a workspace file's hooks got their folder as cwd when it was read).
            cwd=str(absolute(hook_spec.cwd, base_dir) if hook_spec.cwd else base_dir),
            reset=hook_spec.reset or "none",
        )

    return ResolvedHooks(
        before_all=hook(hooks.before_all, DEFAULT_SETUP_TIMEOUT_MS),
        before_each=hook(hooks.before_each, DEFAULT_SETUP_TIMEOUT_MS),
        after_each=hook(hooks.after_each, DEFAULT_TEARDOWN_TIMEOUT_MS),
        after_all=hook(hooks.after_all, DEFAULT_TEARDOWN_TIMEOUT_MS),
    )


def target_hooks(spec: HooksSpec | None, base_dir: Path) -> ResolvedHooks | None:
    """An `execution.targets[]` entry's hooks, or None when it has none that run."""
    resolved = resolve_hooks(spec, base_dir)
    return resolved if resolved != ResolvedHooks() else None
