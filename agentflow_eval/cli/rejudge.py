"""``agentflow-eval rejudge``: judge a finished run's stored trials again, without running
its agent.

    agentflow-eval rejudge RUN_DIR [--config NEW] [--evalset FILE] [--output DIR]

The new run goes into a new run folder (beside the source unless ``--output`` says
otherwise) that names its source (``rejudged_from`` in run.json and results.json, a note
in the scorecard and the report); the source folder is only read. It is a run request
with ``rejudge_from`` set, run as ``run`` runs one: the same stage list, the trial stage
copying the source's trials, and the same judge cache, baseline, publishing, gates,
output and exit codes. What the request leaves out (eval set, config, judge model) is
what the source was started with. Bad input — a folder that is not a finished run with
trials, an eval set that lacks some of its cases — exits 2 with one line, before
anything starts.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from agentflow_eval.cli.common import fail
from agentflow_eval.cli.early import EarlyStart
from agentflow_eval.cli.launch import launch
from agentflow_eval.cli.request_flags import (
    add_request_flags,
    report_file_of,
    request_from_flags,
)
from agentflow_eval.cli.run_flags import (
    add_force_flag,
    add_no_prefect_flag,
    add_print_flags,
    add_verbose_flag,
)
from agentflow_eval.cli.run_outcome import Console
from agentflow_eval.errors import InputError
from agentflow_eval.files.overwriting import JSON_REPORT, check_overwrite
from agentflow_eval.run.rejudge_source import read_rejudge_source

__all__ = ["REJUDGE_FLAGS", "add_parser", "run"]

REJUDGE_FLAGS = (
    "config",
    "judge_model",
    "output_dir",
    "publish_to",
    "s3",
    "min_pass_rate",
    "min_judge_agreement",
    "baseline",
    "fail_on_regression",
    "track",
    "max_cost_increase",
    "max_latency_increase",
    "max_token_increase",
    "max_tool_call_increase",
    "timeout_minutes",
    "labels",
)
"""The run request's fields ``rejudge`` takes as flags: how the trials are judged, and
what the new run is compared with, held to and published to. (How trials run is the
source's.)"""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "rejudge",
        help="judge a finished run's trials again with new or changed criteria",
        description="Judge the stored trials of a finished run again (new criteria, "
        "thresholds, rubrics or judge model) without running its agent, into a new run "
        "folder that names its source; then compare, report and publish as `run` does.",
    )
    parser.add_argument("rejudge_from", metavar="RUN_DIR", help="the finished run folder")
    parser.add_argument(
        "--evalset",
        metavar="EVALSET",
        help="eval-set file or folder holding the run's cases (default: the one it used)",
    )
    add_request_flags(parser, REJUDGE_FLAGS)
    add_print_flags(parser)
    add_force_flag(parser, JSON_REPORT.description)
    add_verbose_flag(parser)
    add_no_prefect_flag(parser)
    parser.set_defaults(open=False, resume=None)


def run(args: argparse.Namespace, early: EarlyStart) -> int:
    """The re-judge's run request (beside its source unless ``--output`` says where), run
    as ``run`` runs one."""
    try:
        report_file = report_file_of(args.output_dir)
        if report_file is not None:  # refused before anything is written
            check_overwrite(report_file, JSON_REPORT, force=args.force)
        source = read_rejudge_source(args.rejudge_from)
        request = request_from_flags(
            args,
            rejudge_from=str(source.run_dir),
            evalset=args.evalset,
            output_dir=args.output_dir or str(source.output_root),
        ).with_environment(os.environ)
    except InputError as exc:
        return fail(str(exc))
    except ValueError as exc:
        return fail(str(exc).splitlines()[-1].strip())
    return launch(request, Console.of(args, os.environ), early)
