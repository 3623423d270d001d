"""The model server's lifecycle: serve its app on a daemon thread (uvicorn, through served.py),
stop it, or serve until Ctrl-C."""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path
from typing import TextIO

from evals_pipeline.model_server.http import ServerState, make_app
from evals_pipeline.model_server.log import RequestLog
from evals_pipeline.model_server.replies import DEFAULT_MODEL, Responder
from evals_pipeline.model_server.script import ModelScript, load_script
from evals_pipeline.served import AsgiOnThread, StartStop


class ModelServer(StartStop):
    """A scripted model on host:port answering Anthropic, Responses and Chat Completions requests.

    Use as a context manager, or call start() and stop(); port 0 picks a free port.
    """

    def __init__(
        self,
        script: ModelScript,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        echo: TextIO | None = None,
    ) -> None:
        self.script = script
        self.host = host
        self._requested_port = port
        self._log_path = log_path
        self._echo = echo
        self._served: AsgiOnThread | None = None
        self._log: RequestLog | None = None

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._served is None:
            raise RuntimeError("the model server is not started")
        return self._served.port

    @property
    def base_url(self) -> str:
        """`http://host:port` without `/v1`: what ANTHROPIC_BASE_URL expects (OpenAI adds `/v1`)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ModelServer:
        """Bind the port and serve on a daemon thread; returns self."""
        if self._served is not None:
            raise RuntimeError("the model server is already started")
        log = RequestLog(self._log_path, self._echo)
        state = ServerState(
            responder=Responder(self.script, DEFAULT_MODEL),
            log=log,
            model=self.script.model or DEFAULT_MODEL,
        )
        served = AsgiOnThread(
            make_app(state), name="model-server", host=self.host, port=self._requested_port
        )
        try:
            served.start()
        except BaseException:
            log.close()
            raise
        self._served, self._log = served, log
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and close the log; safe to call twice."""
        served, self._served = self._served, None
        log, self._log = self._log, None
        if served is None:
            return
        served.stop()
        if log is not None:
            log.close()


def serve(
    script_path: Path,
    *,
    host: str,
    port: int,
    log_path: Path | None,
    out: TextIO = sys.stderr,
) -> None:
    """Run the model server for a script file until Ctrl-C (the `model-server` subcommand).

    Raises ScriptError for a bad script; prints one line per request to `out`.
    """
    script = load_script(script_path)
    server = ModelServer(script, host=host, port=port, log_path=log_path, echo=out)
    with server:
        print(
            f"model server on {server.base_url} ({len(script.turns)} turns) — Ctrl-C to stop",
            file=out,
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
