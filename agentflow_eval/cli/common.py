"""What the commands share: exit codes, the one-line error, flag value types, and a
parser whose errors are one line too."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from agentflow_eval.files.naming import printable
from agentflow_eval.redaction import redact

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BELOW_THRESHOLD",
    "EXIT_INTERRUPTED",
    "EXIT_NO_TRIAL_COMPLETED",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "OneLineErrorParser",
    "fail",
    "one_line",
    "positive_float",
    "positive_int",
    "terminal_text",
]

EXIT_OK, EXIT_BELOW_THRESHOLD, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3
EXIT_NO_TRIAL_COMPLETED = 4
"""Every trial of the run errored: the run measured nothing about the agent."""
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


def terminal_text(text: str) -> str:
    """``text`` as the terminal may show it: secrets redacted, control characters (an
    id's ESC, NUL or CR) shown escaped."""
    return printable(redact(text))


def fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    """Print ``agentflow-eval: error: message`` to stderr; return ``code`` (default: the
    bad-input code)."""
    print(f"agentflow-eval: error: {terminal_text(message)}", file=sys.stderr)
    return code


def one_line(exc: BaseException, *, field: bool = True) -> str:
    """An exception's message on one line. A pydantic ``ValidationError`` gives its
    first error as ``field: message`` (``field=False``: the message alone) rather than
    its multi-line dump."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        try:
            first = errors(include_url=False)[0]
        except (TypeError, IndexError):
            first = None
        if first is not None:
            message = str(first.get("msg", "")).removeprefix("Value error, ")
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {message}" if where and field else message
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        # "[Errno 2] No such file or directory: 'x'" as this tool says things: "x: no such ..."
        return f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    return " ".join(str(exc).split())


def positive_int(value: str) -> int:
    """A flag value that must be a whole number of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


def positive_float(value: str) -> float:
    """A flag value that must be a number above 0 (seconds, say)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {value}")
    return number


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit 2), pointing
    at ``--help`` instead of printing the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_BAD_INPUT,
            f"{self.prog}: error: {message} (see {self.prog} --help)\n",
        )
