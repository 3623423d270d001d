"""How a command ends: AgentV's exit codes, and usage errors on stderr."""

from __future__ import annotations

import sys

# As `agentv eval`: 1 when a case scores below the run's threshold, 2 on usage errors and when
# every case errored.
EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE = 0, 1, 2
EXIT_ALL_ERRORS = 2
# Ours: the run budget (`--budget`) was spent before every case ran; the results are incomplete.
EXIT_NOT_RUN = 3


def usage_error(message: str) -> int:
    """Say what is wrong on stderr; the exit code of a usage error."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE
