"""A scripted model server: real agent CLIs (claude, codex, pi) run offline against scripted turns.

It speaks Anthropic Messages, OpenAI Responses and Chat Completions, picks the script turn from
the request's history (stateless), and turns abstract actions (`write_file`, `bash`) into each
CLI's own tool calls. User guide: docs/agents.md, "The scripted model server".
"""

from evals_pipeline.model_server.script import ModelScript, ScriptError, load_script
from evals_pipeline.model_server.server import ModelServer, serve

__all__ = ["ModelScript", "ModelServer", "ScriptError", "load_script", "serve"]
