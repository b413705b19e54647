"""Flags that commands which run the stage list share (``run``, ``rejudge``): where the
report is published, what the run is compared with and gated on, and what is printed.
Defined once here, so the commands spell and explain them alike."""

from __future__ import annotations

import argparse
from typing import Any

from agentflow_eval.models import defaults

__all__ = [
    "add_baseline_flags",
    "add_fail_under_flag",
    "add_link_flags",
    "add_no_prefect_flag",
    "add_print_flags",
    "add_publish_flags",
    "add_run_timeout_flag",
    "add_track_flag",
    "add_verbose_flag",
    "rate",
]

LINK_EXPIRY_HOURS = 168
"""The longest a presigned link works (``models.params.DEFAULT_LINK_EXPIRY_HOURS``, not
imported: the commands start Prefect's server before they import pydantic)."""


def rate(value: str) -> float:
    """A pass rate given as 0.8 or 80%."""
    try:
        parsed = float(value.rstrip("%")) / (100 if value.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a rate such as 0.8 or 80%, got {value!r}"
        ) from None
    if not 0 <= parsed <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate in 0..1 (or 0%..100%), got {value}")
    return parsed


def add_publish_flags(parser: Any) -> None:
    """``--publish-to`` and how an S3-compatible store is reached and linked."""
    parser.add_argument("--publish-to", metavar="TARGET", help="s3://bucket/prefix or a folder")
    parser.add_argument(
        "--s3-endpoint-url", metavar="URL", help="S3-compatible endpoint, e.g. http://host:8333"
    )
    parser.add_argument(
        "--s3-region",
        metavar="REGION",
        help="the S3 region (default: what boto3's configuration says)",
    )
    parser.add_argument("--s3-path-style", action="store_true", help="path-style S3 addressing")
    add_link_flags(parser)


def add_link_flags(parser: Any) -> None:
    """How published files are linked: ``--s3-links``, ``--s3-public-url`` and
    ``--s3-link-expiry-hours`` (``run`` and ``publish`` link alike)."""
    parser.add_argument(
        "--s3-links",
        choices=["presigned", "public", "endpoint"],
        help="report links: presigned (private bucket; the default), public (under "
        "--s3-public-url; the default when it is given), endpoint (public-read bucket)",
    )
    parser.add_argument("--s3-public-url", help="base URL readers open published reports at")
    parser.add_argument(
        "--s3-link-expiry-hours",
        type=int,
        default=LINK_EXPIRY_HOURS,
        metavar="HOURS",
        help=f"how long presigned report links work (default {LINK_EXPIRY_HOURS}, a week)",
    )


def add_fail_under_flag(parser: Any) -> None:
    """``--fail-under``: the pass rate below which the command exits 1."""
    parser.add_argument(
        "--fail-under", type=rate, metavar="RATE", help="exit 1 if the pass rate is below RATE"
    )


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


def add_baseline_flags(parser: Any) -> None:
    """The run to compare with, and whether a regression from it fails the command."""
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="compare with a run: latest (the last completed run published to --publish-to), "
        "a run folder, its results.json, or an s3:// URI",
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 (and fail regressed cases in junit.xml) on a significant regression "
        "from --baseline, or when the baseline cannot be read",
    )


def add_track_flag(parser: Any) -> None:
    """``--track``: the history the run joins (its ``latest`` baseline is that history's)."""
    parser.add_argument(
        "--track",
        metavar="NAME",
        help=f"the history this run joins (default {defaults.TRACK}): --baseline latest is "
        "the last good run of the same track; name a scheduled or suite run's track (e.g. "
        "the nightly's) to compare with its history on purpose",
    )


def minutes(value: str) -> float:
    """A run timeout in minutes: a number from 0 (0: no limit)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of minutes, got {value!r}") from None
    if not 0 <= number < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more minutes, got {value}")
    return number


def add_run_timeout_flag(parser: Any) -> None:
    """How long the whole run may take (the evaluate flow's ``timeout_minutes``)."""
    parser.add_argument(
        "--timeout-minutes",
        type=minutes,
        metavar="MINUTES",
        help="stop a run still going after this long, exit 3, its finished trials kept for "
        f"--resume (default {defaults.RUN_TIMEOUT_MINUTES:g}; 0: no limit)",
    )


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
