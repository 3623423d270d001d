"""An OS sandbox per child: agents and graders run under bubblewrap on Linux, in a PID namespace
of their own (the runner is invisible), with the host read-only and only their workspace, their
trial's folder and a private HOME and /tmp writable (see docs/agents.md, "Sandbox")."""
