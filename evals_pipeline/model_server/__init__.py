"""A scripted model server: real agent CLIs (claude, codex, pi) run offline against scripted turns.

It speaks Anthropic Messages, OpenAI Responses and Chat Completions, picks the script turn from
the request's history (stateless), and turns abstract actions (`write_file`, `bash`) into each
CLI's own tool calls. User guide: docs/agents.md, "The scripted model server".
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.model_server.script import ModelScript, ScriptError, load_script
    from evals_pipeline.model_server.server import ModelServer, serve

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "ModelScript": "script",
    "ModelServer": "server",
    "ScriptError": "script",
    "load_script": "script",
    "serve": "server",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "ModelScript",
    "ModelServer",
    "ScriptError",
    "load_script",
    "serve",
]
