"""``agentflow-eval rejudge``: judge a finished run's stored trials again, without running
its agent.

    agentflow-eval rejudge RUN_DIR [--config NEW] [--evalset FILE] [--output DIR]

The new run goes into a new run folder (beside the source unless ``--output`` says
otherwise) that names its source (``rejudged_from`` in run.json and results.json, a note
in the scorecard and the report); the source folder is only read. It is the ``run``
command with the evaluate flow's ``rejudge_from`` set: the same stage list, the trial
stage copying the source's trials, and the same judge cache, baseline, publishing, gates,
output and exit codes. Bad input — a folder that is not a finished run with trials, an
eval set that lacks some of its cases — exits 2 with one line, before anything starts.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentflow_eval.cli import run as run_command
from agentflow_eval.cli.common import add_tolerance_flags, fail
from agentflow_eval.cli.run_flags import (
    add_baseline_flags,
    add_fail_under_flag,
    add_no_prefect_flag,
    add_print_flags,
    add_publish_flags,
    add_run_timeout_flag,
    add_verbose_flag,
)

__all__ = ["add_parser", "run"]


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
        "--config",
        metavar="FILE",
        help="config file to judge with (default: the one the run used)",
    )
    parser.add_argument(
        "--evalset",
        metavar="EVALSET",
        help="eval-set file or folder holding the run's cases (default: the one it used)",
    )
    parser.add_argument("--judge-model", metavar="MODEL", help="LiteLLM model for LLM judges")
    parser.add_argument(
        "--output",
        metavar="DIR|FILE.json",
        help="folder for run folders (default: the one holding the source run's); or a "
        ".json file: the JSON report (results.json) is written there, the run folder "
        "beside it",
    )
    add_publish_flags(parser)
    add_fail_under_flag(parser)
    add_print_flags(parser)
    add_baseline_flags(parser)
    add_tolerance_flags(parser)
    add_verbose_flag(parser)
    add_run_timeout_flag(parser)
    add_no_prefect_flag(parser)
    parser.set_defaults(max_file_mb=None)  # the source's files were read once already


def run(args: argparse.Namespace) -> int:
    """Fill in what the source run was started with, then run it as ``run`` does."""
    from agentflow_eval.errors import InputError
    from agentflow_eval.run.rejudge_source import read_rejudge_source

    try:
        source = read_rejudge_source(args.rejudge_from)
        # what the source was started with fills in what is not given (a run started
        # from Python recorded no eval set: then --evalset is needed)
        started = source.params() if source.started_from_params or not args.evalset else None
    except InputError as exc:
        return fail(str(exc))
    given = vars(args)
    as_run = {
        **vars(_run_defaults()),
        **given,
        "rejudge_from": str(source.run_dir),
        "evalset": args.evalset or (started.evalset if started else None),
        "config": args.config or (started.config if started else None),
        "judge_model": args.judge_model or (started.judge_model if started else None),
        "output": args.output or str(source.output_root),
    }
    return run_command.run(argparse.Namespace(**as_run))


def _run_defaults() -> argparse.Namespace:
    """Every ``run`` flag at its default: what a re-judge does not set is what a run
    without that flag does."""
    parser = argparse.ArgumentParser()
    run_command.add_parser(parser.add_subparsers())
    return parser.parse_args(["run"])
