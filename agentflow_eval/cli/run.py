"""``agentflow-eval run``: evaluate an agent on an eval set.

Report-only by default: it exits 0 whatever the pass rate (a scorecard, not a gate);
``--fail-under RATE`` turns it into a gate. Bad input exits 2 with one clear message and
no traceback; a run that cannot go on (Prefect's temporary server did not start) exits
3, saying where its finished trials are kept.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from agentflow_eval.cli.common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_OK,
    EXIT_RUN_FAILED,
    fail,
)
from agentflow_eval.run import defaults

__all__ = ["add_parser", "run"]


def _rate(value: str) -> float:
    rate = float(value.rstrip("%")) / (100 if value.endswith("%") else 1)
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate in 0..1 (or 0%..100%), got {value}")
    return rate


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("run", help="evaluate an agent on an eval set")
    parser.add_argument("agent", nargs="?", help="module:attr, file.py:attr or http(s):// URL")
    parser.add_argument("evalset", nargs="?", help="eval-set file or folder (native or ADK)")
    parser.add_argument("--config", help="config file (default: test_config.json beside evalset)")
    parser.add_argument(
        "--runs", type=int, help=f"trials per case (default {defaults.RUNS}, or the config's)"
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        help=f"trials in flight (default {defaults.MAX_CONCURRENCY}, or the config's)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        dest="trial_timeout_s",
        help=f"seconds per trial (default {defaults.TRIAL_TIMEOUT_S:g}, or the config's)",
    )
    parser.add_argument("--output", default=defaults.OUTPUT_DIR, help="folder for run folders")
    parser.add_argument("--model", help="LiteLLM model for the agent (LiteLLM agents)")
    parser.add_argument("--judge-model", help="LiteLLM model for LLM judges")
    parser.add_argument("--resume", metavar="RUN_DIR", help="finish an earlier, interrupted run")
    parser.add_argument("--publish-to", help="s3://bucket/prefix or a folder")
    parser.add_argument("--s3-endpoint-url", help="S3-compatible endpoint, e.g. http://host:8333")
    parser.add_argument("--s3-region")
    parser.add_argument("--s3-path-style", action="store_true", help="path-style S3 addressing")
    parser.add_argument(
        "--s3-links",
        choices=["presigned", "public", "endpoint"],
        help="report links: presigned (private bucket; the default), public (under "
        "--s3-public-url; the default when it is given), endpoint (public-read bucket)",
    )
    parser.add_argument("--s3-public-url", help="base URL readers open published reports at")
    parser.add_argument("--s3-link-expiry-hours", type=int, default=168, metavar="HOURS")
    parser.add_argument(
        "--fail-under", type=_rate, metavar="RATE", help="exit 1 if the pass rate is below RATE"
    )
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
    parser.add_argument("-v", "--verbose", action="store_true", help="criterion means, failures")


def _params(args: argparse.Namespace):  # -> EvaluateParams
    from agentflow_eval.models.params import EvaluateParams, S3Options
    from agentflow_eval.run.plan import params_from_run_dir

    overrides = {
        key: value
        for key, value in {
            "config": args.config,
            "runs": args.runs,
            "max_concurrency": args.max_concurrency,
            "trial_timeout_s": args.trial_timeout_s,
            "model": args.model,
            "judge_model": args.judge_model,
            "publish_to": args.publish_to,
            "baseline": args.baseline,
            "fail_on_regression": args.fail_on_regression or None,
        }.items()
        if value is not None
    }
    s3 = S3Options(
        endpoint_url=args.s3_endpoint_url,
        region=args.s3_region,
        path_style=args.s3_path_style,
        report_links=args.s3_links or ("public" if args.s3_public_url else "presigned"),
        public_url=args.s3_public_url,
        link_expiry_hours=args.s3_link_expiry_hours,
    )
    if args.resume:
        params = params_from_run_dir(args.resume)
        update = dict(overrides)
        if args.agent:
            update["agent"] = args.agent
        if args.evalset:
            update["evalset"] = args.evalset
        return params.model_copy(update=update)
    if not args.agent or not args.evalset:
        raise ValueError("run needs AGENT and EVALSET (or --resume RUN_DIR)")
    return EvaluateParams(
        agent=args.agent, evalset=args.evalset, output_dir=args.output, s3=s3, **overrides
    )


def run(args: argparse.Namespace) -> int:
    # The flow run's record gets every log line; the terminal only warnings and errors
    # (the scorecard says the rest), unless --verbose.
    os.environ.setdefault(
        "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO" if args.verbose else "WARNING"
    )
    # Boot Prefect's temporary API server on the other core while this process imports
    # Prefect and the agent and checks the inputs (a no-op when PREFECT_API_URL names one).
    from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI

    api = TemporaryPrefectAPI.launch()
    sys.path.insert(0, os.getcwd())  # agents named as package.module:attr from the project

    from pydantic import ValidationError

    from agentflow_eval.agents.loader import AgentLoadError, load_agent
    from agentflow_eval.files.loading import EvalFileError
    from agentflow_eval.run.plan import load_inputs

    if args.baseline and args.baseline.strip().rstrip("/") == "latest" and not args.publish_to:
        return fail("--baseline latest is the last run published to --publish-to: give both")
    try:
        params = _params(args)
        # Check what the user can fix before the flow run starts: the same loaders the
        # flow's load-evalset task runs, so a typo costs no flow run and writes nothing.
        agent = load_agent(params.agent, model=params.model)
        inputs = load_inputs(params.evalset, params.config, judge_model=params.judge_model)
    except (EvalFileError, AgentLoadError, FileNotFoundError, ValueError) as exc:
        return fail(str(exc))
    except ValidationError as exc:
        return fail(str(exc))
    for warning in inputs.warnings:
        print(f"warning: {warning}", file=sys.stderr)

    from agentflow_eval.demo.names import SIMULATED_LABEL
    from agentflow_eval.flows.evaluate import RegressionGateFailed, evaluate
    from agentflow_eval.flows.support.temporary_api import TemporaryAPIError, run_on
    from agentflow_eval.report.scorecard import format_scorecard

    if args.verbose:
        print(f"agent {agent.name}: running {params.evalset}", file=sys.stderr)
    try:
        outcome = asyncio.run(
            run_on(api, lambda: evaluate(**params.flow_parameters()), flow_name=evaluate.name)
        )
    except TemporaryAPIError as exc:
        print(f"agentflow-eval: error: {exc}; no trial has run", file=sys.stderr)
        return EXIT_RUN_FAILED
    except RegressionGateFailed as exc:  # the run is complete: report it, then fail
        outcome = exc.outcome
    run = outcome.run
    trials = None
    if args.verbose:  # the flow returns a summary: failing trials are read case by case
        from agentflow_eval.report.case_trials import JudgedFileTrials
        from agentflow_eval.run.plan import RunPaths

        trials = JudgedFileTrials.scan(RunPaths(outcome.run_dir).judged)
    print(
        format_scorecard(
            run,
            verbose=args.verbose,
            simulated_label=SIMULATED_LABEL,
            trials=trials,
            comparison=outcome.comparison,
        )
    )
    print(f"results in {outcome.run_dir}  (report.html, results.json, junit.xml)")
    for note in outcome.notes:
        print(note)
    compared = outcome.comparison
    if compared is not None and compared.gate_failed:
        why = (
            "a significant regression from the baseline"
            if compared.regressed
            else "the baseline could not be read, so a regression cannot be ruled out"
        )
        print(f"--fail-on-regression: {why}", file=sys.stderr)
        return EXIT_BELOW_THRESHOLD
    if args.fail_under is not None and run.totals.pass_rate < args.fail_under:
        print(
            f"pass rate {run.totals.pass_rate:.0%} is below --fail-under {args.fail_under:.0%}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK
