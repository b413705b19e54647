"""The command's parser and its dispatch to one module per subcommand (see
:mod:`agentflow_eval.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from agentflow_eval.cli import (
    compare,
    evalset,
    init,
    publish,
    rejudge,
    report,
    review,
    run,
    schema,
    traces,
    view,
)
from agentflow_eval.cli.common import OneLineErrorParser
from agentflow_eval.cli.early import EarlyStart
from agentflow_eval.version import __version__

__all__ = ["ALIASES", "COMMANDS", "build_parser", "dispatch"]

COMMANDS = {
    "report": report,
    "publish": publish,
    "schema": schema,
    "compare": compare,
    "eval-set": evalset,
    "init": init,
    "view": view,
    "review": review,
}
"""The commands that take their arguments alone; ``run``, ``rejudge`` and ``traces`` also
take what was started early (:mod:`.early`)."""

ALIASES = {"eval": "run"}
"""Other names a command answers to (``eval``: the name evaluation plans often use)."""


def build_parser() -> argparse.ArgumentParser:
    """The command's parser; every subcommand's errors are one line (their parsers are
    made by ``add_subparsers``, of the same class)."""
    parser = OneLineErrorParser(
        prog="agentflow-eval",
        description="Evaluate LLM agents: repeated trials, deterministic and LLM-judged "
        "criteria, pass rates. Runs as a Prefect flow.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, help="the command to run")
    for module in (
        run,
        report,
        publish,
        schema,
        compare,
        evalset,
        rejudge,
        traces,
        init,
        view,
        review,
    ):
        module.add_parser(sub)
    return parser


def dispatch(argv: Sequence[str], early: EarlyStart) -> int:
    """Parse ``argv`` and run its command."""
    args = build_parser().parse_args(argv)
    name = ALIASES.get(args.command, args.command)
    if name == "run":
        return run.run(args, early)
    if name == "rejudge":
        return rejudge.run(args, early)
    if name == "traces":
        return traces.run(args, early)
    code: int = COMMANDS[name].run(args)
    return code
