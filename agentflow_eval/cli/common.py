"""What the commands share: exit codes and the one-line error."""

from __future__ import annotations

import sys

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BELOW_THRESHOLD",
    "EXIT_NO_TRIAL_COMPLETED",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "fail",
    "terminal_text",
]

EXIT_OK, EXIT_BELOW_THRESHOLD, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3
EXIT_NO_TRIAL_COMPLETED = 4
"""Every trial of the run errored: the run measured nothing about the agent."""


def terminal_text(text: str) -> str:
    """``text`` as the terminal may show it: secrets redacted, control characters (an
    id's ESC, NUL or CR) shown escaped."""
    from agentflow_eval.files.naming import printable
    from agentflow_eval.redaction import redact

    return printable(redact(text))


def fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    """Print ``agentflow-eval: error: message`` to stderr; return ``code`` (default: the
    bad-input code)."""
    print(f"agentflow-eval: error: {terminal_text(message)}", file=sys.stderr)
    return code
