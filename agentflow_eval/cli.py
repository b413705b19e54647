"""The ``agentflow-eval`` command.

    agentflow-eval run AGENT EVALSET [--config FILE] [--runs N] [--max-concurrency N]
                       [--output DIR] [--verbose] [--model M] [--fail-under RATE] ...
    agentflow-eval schema [-o DIR]

``run`` is report-only by default: it exits 0 whatever the pass rate (seed 003: a
scorecard, not a gate); ``--fail-under RATE`` turns it into a gate. Bad input exits 2
with one clear message and no traceback; a run that cannot go on (Prefect's temporary
server did not start) exits 3, saying where its finished trials are kept.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_OK, EXIT_BELOW_THRESHOLD, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3


def _rate(value: str) -> float:
    rate = float(value.rstrip("%")) / (100 if value.endswith("%") else 1)
    if not 0 <= rate <= 1:
        raise argparse.ArgumentTypeError(f"expected a rate in 0..1 (or 0%..100%), got {value}")
    return rate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentflow-eval",
        description="Evaluate LLM agents: repeated trials, deterministic and LLM-judged "
        "criteria, pass rates. Runs as a Prefect flow.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate an agent on an eval set")
    run.add_argument("agent", nargs="?", help="module:attr, file.py:attr or http(s):// URL")
    run.add_argument("evalset", nargs="?", help="eval-set file or folder (native or ADK)")
    run.add_argument("--config", help="config file (default: test_config.json beside evalset)")
    run.add_argument("--runs", type=int, help="trials per case (default 5)")
    run.add_argument("--max-concurrency", type=int, help="trials in flight (default 16)")
    run.add_argument("--timeout", type=float, dest="trial_timeout_s", help="seconds per trial")
    run.add_argument("--output", default="eval-results", help="folder for run folders")
    run.add_argument("--model", help="LiteLLM model for the agent (LiteLLM agents)")
    run.add_argument("--judge-model", help="LiteLLM model for LLM judges")
    run.add_argument("--resume", metavar="RUN_DIR", help="finish an earlier, interrupted run")
    run.add_argument("--publish-to", help="s3://bucket/prefix or a folder")
    run.add_argument("--s3-endpoint-url", help="S3-compatible endpoint, e.g. http://host:8333")
    run.add_argument("--s3-region")
    run.add_argument("--s3-path-style", action="store_true", help="path-style S3 addressing")
    run.add_argument(
        "--fail-under", type=_rate, metavar="RATE", help="exit 1 if the pass rate is below RATE"
    )
    run.add_argument("-v", "--verbose", action="store_true", help="criterion means, failures")

    schema = sub.add_parser("schema", help="write JSON Schemas of eval-set and config files")
    schema.add_argument("-o", "--output", default=".", help="folder to write into")

    report = sub.add_parser("report", help="re-render the HTML report of an earlier run")
    report.add_argument("results", help="results.json of an earlier run")
    report.add_argument("-o", "--output", default="report.html", help="HTML file to write")
    report.add_argument("--evalset", help="the eval set, to show expected data it has")

    publish = sub.add_parser(
        "publish", help="upload a run folder that could not be published (or any run folder)"
    )
    publish.add_argument("run_dir", help="the run folder (holds results.json, report.html)")
    publish.add_argument(
        "--to",
        dest="target",
        help="s3://bucket/prefix or a folder (default: where the failed publish was going)",
    )
    publish.add_argument("--s3-endpoint-url")
    publish.add_argument("--s3-region")
    publish.add_argument("--s3-path-style", action="store_true")
    return parser


def console() -> None:
    """The ``agentflow-eval`` executable: :func:`main`, then an exit that skips tearing
    the interpreter down.

    Exit goes as usual — Prefect's workers drain, the ``atexit`` handlers run (the
    temporary Prefect server stops) — up to the last handler, which this registers
    first: it flushes logging and the standard streams and ends the process, sparing the
    0.4–0.7 s Python spends freeing every module and object of a run. Files are closed by
    then (every writer here closes its file). An exception or ``SystemExit`` from
    :func:`main` (argparse's usage errors) exits the usual way.
    """
    exit_code: list[int] = []

    def end_process() -> None:
        if exit_code:
            import logging

            logging.shutdown()
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):  # closed, or a broken pipe
                    stream.flush()
            os._exit(exit_code[0])

    atexit.register(end_process)
    exit_code.append(main())
    sys.exit(exit_code[0])


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "schema":
        return _schema(args)
    if args.command == "report":
        return _report(args)
    if args.command == "publish":
        return _publish(args)
    return _run(args)


def _report(args: argparse.Namespace) -> int:
    from agentflow_eval.loading import EvalFileError, load_evalset
    from agentflow_eval.report import ResultsFileError, read_results_json, write_html

    try:
        run = read_results_json(Path(args.results))
        eval_set = load_evalset(args.evalset).eval_set if args.evalset else None
    except (ResultsFileError, EvalFileError, FileNotFoundError) as exc:
        return _fail(str(exc))
    print(write_html(run, Path(args.output), eval_set))
    return EXIT_OK


def _publish(args: argparse.Namespace) -> int:
    from agentflow_eval.publishing import publish_pending
    from agentflow_eval.storage import parse_target

    run_dir = Path(args.run_dir)
    if not (run_dir / "results.json").is_file():
        return _fail(f"{run_dir}: no results.json; pass the run folder a run printed")
    try:
        target = (
            parse_target(
                args.target,
                endpoint_url=args.s3_endpoint_url,
                region=args.s3_region,
                path_style=args.s3_path_style,
            )
            if args.target
            else None
        )
        outcome = publish_pending(run_dir, target)
    except ValueError as exc:
        return _fail(str(exc))
    print(outcome.message)
    return EXIT_OK if outcome.published else EXIT_BELOW_THRESHOLD


def _schema(args: argparse.Namespace) -> int:
    from agentflow_eval.schema import write_schemas

    for path in write_schemas(Path(args.output)):
        print(path)
    return EXIT_OK


def _fail(message: str) -> int:
    print(f"agentflow-eval: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _params(args: argparse.Namespace):  # -> EvaluateParams
    from agentflow_eval.params import EvaluateParams, S3Options
    from agentflow_eval.run_plan import params_from_run_dir

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
        }.items()
        if value is not None
    }
    s3 = S3Options(
        endpoint_url=args.s3_endpoint_url, region=args.s3_region, path_style=args.s3_path_style
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


def _run(args: argparse.Namespace) -> int:
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if args.verbose else "WARNING")
    # Boot Prefect's temporary API server on the other core while this process imports
    # LiteLLM, Prefect and the agent (a no-op when PREFECT_API_URL names a server).
    from flows.local_api import LocalPrefectAPI

    api = LocalPrefectAPI.launch()
    sys.path.insert(0, os.getcwd())  # agents named as package.module:attr from the project

    from pydantic import ValidationError

    from agentflow_eval.agents.loader import AgentLoadError, load_agent
    from agentflow_eval.loading import EvalFileError
    from agentflow_eval.run_plan import load_inputs

    try:
        params = _params(args)
        # Fail fast, before Prefect starts, on anything the user can fix.
        agent = load_agent(params.agent, model=params.model)
        _, _, warnings = load_inputs(params)
    except (EvalFileError, AgentLoadError, FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    except ValidationError as exc:
        return _fail(str(exc))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)

    from agentflow_eval.scorecard import format_scorecard
    from agentflow_eval.simulated import SIMULATED_LABEL
    from flows.local_run import TemporaryAPIError, evaluate_here

    if args.verbose:
        print(f"agent {agent.name}: running {params.evalset}", file=sys.stderr)
    try:
        outcome = asyncio.run(evaluate_here(params, agent, api))
    except TemporaryAPIError as exc:
        print(f"agentflow-eval: error: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    run = outcome.run
    trials = None
    if args.verbose:  # the flow returns a summary: failing trials are read case by case
        from agentflow_eval.case_trials import JudgedFileTrials
        from agentflow_eval.runner import RunPaths

        trials = JudgedFileTrials.scan(RunPaths(outcome.run_dir).judged)
    print(
        format_scorecard(run, verbose=args.verbose, simulated_label=SIMULATED_LABEL, trials=trials)
    )
    print(f"results in {outcome.run_dir}  (report.html, results.json, junit.xml)")
    for note in outcome.notes:
        print(note)
    if args.fail_under is not None and run.totals.pass_rate < args.fail_under:
        print(
            f"pass rate {run.totals.pass_rate:.0%} is below --fail-under {args.fail_under:.0%}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    console()
