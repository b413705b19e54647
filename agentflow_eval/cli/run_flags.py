"""Flags that the commands which run the stage list share (``run``, ``rejudge``) and that
are not run settings: what is printed, and how the run is carried out. The run's own
settings are the run request's fields, each with its flag (:mod:`.request_flags`)."""

from __future__ import annotations

from typing import Any

__all__ = ["add_force_flag", "add_no_prefect_flag", "add_print_flags", "add_verbose_flag"]


def add_print_flags(parser: Any) -> None:
    """What is printed: the scorecard (``--full``), one line, or JSON."""
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "-q", "--quiet", action="store_true", help="no progress; print only the summary line"
    )
    output.add_argument(
        "--json", action="store_true", help="print the run summary as JSON on stdout"
    )
    parser.add_argument("--full", action="store_true", help="list every passing case")


def add_no_prefect_flag(parser: Any) -> None:
    """``--no-prefect``: the same stages in this process, without a flow run."""
    parser.add_argument(
        "--no-prefect",
        action="store_true",
        help="run the same stages in this process without Prefect (no flow run, no server "
        "to start: a fast local loop); also AGENTFLOW_EVAL_NO_PREFECT=1",
    )


def add_verbose_flag(parser: Any) -> None:
    """``-v``: criterion means, each failing trial and Prefect's log."""
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="criterion means, each failing trial, logs"
    )


def add_force_flag(parser: Any, what: str) -> None:
    """``--force``: write over the file ``--output`` names whatever it is
    (:mod:`agentflow_eval.files.overwriting` says what is written over without it)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"write over the --output file even when it is not {what}",
    )
