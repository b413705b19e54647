"""``agentflow-eval run``: evaluate an agent on an eval set.

Report-only by default: it exits 0 whatever the pass rate (a scorecard, not a gate);
``--fail-under RATE`` turns it into a gate. Bad input exits 2 with one clear message and
no traceback (that includes a ``--resume`` whose folder is in use or holds another run);
a run that cannot go on (Prefect's temporary server did not start, a model provider
refused the credentials) exits 3, saying where its finished trials are kept; a run in
which every trial errored exits 4. Everything printed is redacted and shows control
characters escaped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from agentflow_eval.cli.common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_NO_TRIAL_COMPLETED,
    EXIT_OK,
    EXIT_RUN_FAILED,
    fail,
    terminal_text,
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
        "--count-infrastructure-errors",
        action="store_true",
        help="count trials the model provider failed (after retries) against the pass rate "
        "(default: reported apart, left out)",
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
            "count_infrastructure_errors": args.count_infrastructure_errors or None,
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
    from agentflow_eval.redaction import install_log_redaction

    install_log_redaction()  # no log line of this process carries a secret
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
    from agentflow_eval.run.plan import RunFolderBusy, RunOptions, check_resumable, load_inputs

    try:
        params = _params(args)
        # Check what the user can fix before the flow run starts: the same loaders the
        # flow's load-evalset task runs, so a typo costs no flow run and writes nothing.
        agent = load_agent(params.agent, model=params.model)
        inputs = load_inputs(params.evalset, params.config, judge_model=params.judge_model)
        if params.resume:
            check_resumable(params.resume, inputs, RunOptions.of(params))
    except (EvalFileError, AgentLoadError, FileNotFoundError, ValueError, RunFolderBusy) as exc:
        return fail(str(exc))
    except ValidationError as exc:
        return fail(str(exc))
    for warning in inputs.warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)

    from agentflow_eval.demo.names import SIMULATED_LABEL
    from agentflow_eval.flows.evaluate import evaluate
    from agentflow_eval.flows.support.console import quiet_deliberate_stops
    from agentflow_eval.flows.support.temporary_api import TemporaryAPIError, run_on
    from agentflow_eval.report.scorecard import format_scorecard

    quiet_deliberate_stops()  # a run stopped on purpose is told in one line, below

    if args.verbose:
        print(terminal_text(f"agent {agent.name}: running {params.evalset}"), file=sys.stderr)
    try:
        outcome = asyncio.run(
            run_on(api, lambda: evaluate(**params.flow_parameters()), flow_name=evaluate.name)
        )
    except TemporaryAPIError as exc:
        print(f"agentflow-eval: error: {exc}; no trial has run", file=sys.stderr)
        return EXIT_RUN_FAILED
    except Exception as exc:
        stopped = _stopped(exc)
        if stopped is None:
            raise
        return stopped
    run = outcome.run
    trials = None
    if args.verbose:  # the flow returns a summary: failing trials are read case by case
        from agentflow_eval.report.case_trials import JudgedFileTrials
        from agentflow_eval.run.plan import RunPaths

        trials = JudgedFileTrials.scan(RunPaths(outcome.run_dir).judged)
    scorecard = format_scorecard(
        run, verbose=args.verbose, simulated_label=SIMULATED_LABEL, trials=trials
    )
    print(terminal_text(scorecard))
    print(terminal_text(f"results in {outcome.run_dir}  (report.html, results.json, junit.xml)"))
    for note in outcome.notes:
        print(terminal_text(note))
    if run.totals.trials and run.totals.errored == run.totals.trials:
        return fail(
            f"every trial errored ({run.totals.trials} of {run.totals.trials}): the run "
            "measured nothing about the agent (see the errors in report.html)",
            EXIT_NO_TRIAL_COMPLETED,
        )
    if args.fail_under is not None and run.totals.pass_rate < args.fail_under:
        print(
            f"pass rate {run.totals.pass_rate:.0%} is below --fail-under {args.fail_under:.0%}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def _stopped(exc: BaseException) -> int | None:
    """The exit code and one-line message for a run the flow stopped on purpose: refused
    credentials (the run cannot go on), or a run folder another process took, or one
    that holds another run, found only as the flow started; ``None`` for anything else."""
    from agentflow_eval.llm.retry import auth_error_in
    from agentflow_eval.run.plan import ResumeMismatch, RunFolderBusy

    refused = auth_error_in(exc)
    if refused is not None:
        where = getattr(refused, "run_dir", None)
        resume = f"--resume {where}" if where else "--resume RUN_DIR"
        return fail(
            f"{refused.reason}; the run stopped: fix the credentials, then finish it with "
            f"{resume} (the trials finished so far are kept)",
            EXIT_RUN_FAILED,
        )
    for found in _chain(exc):
        if isinstance(found, RunFolderBusy | ResumeMismatch):
            return fail(str(found))
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, what it was raised from, and what its groups hold."""
    seen: list[BaseException] = []
    stack = [exc]
    while stack:
        current = stack.pop()
        if any(current is other for other in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return seen
