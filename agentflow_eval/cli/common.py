"""What the commands share: exit codes and the one-line error."""

from __future__ import annotations

import sys

__all__ = ["EXIT_BAD_INPUT", "EXIT_BELOW_THRESHOLD", "EXIT_OK", "EXIT_RUN_FAILED", "fail"]

EXIT_OK, EXIT_BELOW_THRESHOLD, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3


def fail(message: str) -> int:
    """Print ``agentflow-eval: error: message`` to stderr; return the bad-input code."""
    print(f"agentflow-eval: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
