"""``agentflow-eval compare``: did the candidate run get worse than its baseline?

Each side is a run folder, a results.json, an ``s3://`` location (a published run's
folder or its results.json), ``<publish target>/<eval_set_id>/latest``, or ``latest``
with ``--publish-to``. Prints the per-case table, the overall line, criterion means and
the power line (``--json``: the comparison as JSON; ``--format markdown``: a summary fit
for a pull-request comment). Exit codes: 0 (report-only), 1 with
``--fail-on-regression`` when a case or the overall pass rate regressed significantly
(or cost, latency, tokens or tool calls rose significantly beyond a ``--max-*-increase``
tolerance),
2 bad input (one line), 3 the store could not be reached.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentflow_eval.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_BELOW_THRESHOLD,
    EXIT_OK,
    EXIT_RUN_FAILED,
    fail,
)
from agentflow_eval.cli.request_flags import add_request_flags, request_fields_given
from agentflow_eval.compare import (
    Side,
    compare_runs,
    console_for,
    is_latest,
    load_side,
    print_comparison,
)
from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.models.request import S3Options
from agentflow_eval.models.tolerances import EfficiencyTolerances
from agentflow_eval.report.pull_request import comparison_comment
from agentflow_eval.storage.history import AgentIdentity

__all__ = ["add_parser", "run"]

SIDE_HELP = (
    "a run folder, its results.json, s3://bucket/prefix/<eval_set_id>/<run folder>, "
    ".../<eval_set_id>/latest, or 'latest' (with --publish-to)"
)


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare a run with its baseline: per-case exact tests, the overall change, power",
        description="Compare a candidate run with a baseline run of the same eval set: per "
        "case, Boschloo's exact test on the pass counts with Holm's correction; overall, the "
        "change in pass rate paired by case with a confidence interval; and the power of "
        "the per-case test for the runs used; and efficiency (cost, tokens, latency, tool "
        "calls: per case the Mann-Whitney U test with Holm's correction, overall the "
        "geometric mean of the per-case ratios of medians) with where the trajectories of "
        "the cases that got worse part ways. Report-only unless --fail-on-regression; "
        "efficiency fails it only beyond a --max-*-increase tolerance.",
    )
    # metavars as `run` names the same things
    parser.add_argument("baseline", metavar="BASELINE", help=f"the baseline: {SIDE_HELP}")
    parser.add_argument("candidate", metavar="CANDIDATE", help=f"the candidate: {SIDE_HELP}")
    parser.add_argument(
        "--publish-to",
        metavar="TARGET",
        help="where runs are published (s3://bucket/prefix or a folder): where 'latest' looks",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        metavar="ALPHA",
        help="significance level, two-sided (default 0.05)",
    )
    parser.add_argument(
        "--detect-drop",
        type=float,
        default=0.2,
        metavar="RATE",
        help="the drop in pass rate to plan runs for in the power line (default 0.2)",
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default=None,
        help="text (the default: tables for a terminal), json (as --json), or markdown (a "
        "summary fit for a pull-request comment)",
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a case or the overall pass rate regressed significantly",
    )
    parser.add_argument(
        "--allow-different-eval-sets",
        action="store_true",
        help="compare runs of different eval sets (cases are paired by id)",
    )
    add_request_flags(parser, _TOLERANCES)
    s3 = parser.add_argument_group("reaching an S3-compatible store")
    add_request_flags(s3, ("s3",))


_TOLERANCES = (
    "max_cost_increase",
    "max_latency_increase",
    "max_token_increase",
    "max_tool_call_increase",
)
"""The run request's efficiency tolerances, taken by ``compare`` as ``run`` takes them."""


def run(args: argparse.Namespace) -> int:
    shape = args.format or ("json" if args.json else "text")
    if args.json and shape != "json":
        return fail(f"--json and --format {shape} disagree: give one of them")
    if not 0 < args.alpha < 1:
        return fail(f"--alpha must be between 0 and 1, got {args.alpha}")
    if not 0 < args.detect_drop <= 1:
        return fail(f"--detect-drop must be within (0, 1], got {args.detect_drop}")
    if str(args.baseline).strip() == "latest" and str(args.candidate).strip() == "latest":
        return fail("only one side can be a bare 'latest': give the other side as a run")
    given = request_fields_given(args)
    try:
        s3 = S3Options.model_validate(given.get("s3", {}))
    except ValueError as exc:
        return fail(str(exc).splitlines()[-1].strip())
    try:
        # a bare 'latest' learns its eval set (and which run to skip) from the other side
        order = ("baseline", "candidate")
        if is_latest(args.baseline) and not is_latest(args.candidate):
            order = ("candidate", "baseline")
        sides: dict[str, Side] = {}
        for name in order:
            other = next(iter(sides.values()), None)
            sides[name] = load_side(
                getattr(args, name),
                publish_to=args.publish_to,
                eval_set_id=other.run.eval_set_id if other else None,
                exclude_run_id=other.run.run_id if other else None,
                s3=s3,
                agent=AgentIdentity.of(other.run) if other else None,
            )
        baseline, candidate = sides["baseline"], sides["candidate"]
        comparison = compare_runs(
            baseline.run,
            candidate.run,
            alpha=args.alpha,
            detect_drop=args.detect_drop,
            allow_different_eval_sets=args.allow_different_eval_sets,
            baseline_source=baseline.source,
            candidate_source=candidate.source,
            tolerances=EfficiencyTolerances(
                **{name: value for name, value in given.items() if name in _TOLERANCES}
            ),
        )
    except InputError as exc:  # a side missing or unreadable, runs that do not compare
        return fail(str(exc))
    except StoreError as exc:
        fail(str(exc).splitlines()[0])
        return EXIT_RUN_FAILED if exc.transient else EXIT_BAD_INPUT
    if shape == "json":
        print(comparison.model_dump_json(indent=2))
    elif shape == "markdown":
        print(comparison_comment(comparison), end="")
    else:
        print_comparison(comparison, console_for())
    return EXIT_BELOW_THRESHOLD if args.fail_on_regression and comparison.regressed else EXIT_OK
