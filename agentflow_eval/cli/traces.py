"""``agentflow-eval traces``: production traces scored.

    agentflow-eval traces score SOURCE --config FILE [options] [--no-prefect]

SOURCE is where the agent's traces are kept as OTLP JSON: ``s3://bucket/prefix`` (the
OpenTelemetry Collector's S3 exporter) or a folder (its file exporter's rotated files).
The objects no earlier run read are read (a cursor kept where the results go), sampled,
and scored with the config's reference-free criteria, a run per agent version; traces
that failed are added to a candidates eval set. It is a traces request
(:class:`~agentflow_eval.models.traces_request.TracesRequest`, each flag one of its
fields) run by the one call that scores traces
(:func:`agentflow_eval.pipeline.score_traces.score_traces`): in this process with
``--no-prefect``, else as a run of the ``evaluate-traces`` flow on the temporary server
the command launched. Bad input is one line and exit 2, before any object is claimed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from agentflow_eval.cli.common import EXIT_OK, EXIT_RUN_FAILED, fail, one_line, terminal_text
from agentflow_eval.cli.direct import local_judge_cache, show_logs
from agentflow_eval.cli.early import EarlyStart, wants_no_prefect
from agentflow_eval.cli.request_flags import add_request_flags, request_fields_given
from agentflow_eval.cli.run_flags import add_no_prefect_flag, add_verbose_flag
from agentflow_eval.cli.run_outcome import shown
from agentflow_eval.errors import InputError, RunStopped, StoreError
from agentflow_eval.models.traces_request import TracesRequest
from agentflow_eval.pipeline.execute import Runtime
from agentflow_eval.pipeline.score_traces import TracesRuntime, score_traces
from agentflow_eval.redaction import install_log_redaction

__all__ = ["TRACES_FLAGS", "add_parser", "run"]

TRACES_FLAGS = tuple(name for name in TracesRequest.model_fields if name != "source")
"""Every field of the traces request but its source (the positional) is a flag."""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "traces",
        help="score production traces (OTLP JSON in a bucket or folder)",
        description="Production traces, scored: read the new OTLP JSON trace objects of a "
        "bucket prefix or folder, score them with reference-free criteria (a run per agent "
        "version), and add the failing ones to an eval set as candidate cases.",
    )
    actions = parser.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="score: read and score new traces"
    )
    score = actions.add_parser(
        "score",
        help="score the traces no earlier run read",
        description="Read the trace objects of SOURCE no earlier run read, sample and "
        "score them with the config's reference-free criteria, a run per agent version, "
        "and add the failing ones to the candidates eval set.",
    )
    score.add_argument(
        "source", metavar="SOURCE", help="s3://bucket/prefix or a folder of OTLP JSON traces"
    )
    add_request_flags(score, TRACES_FLAGS, TracesRequest)
    add_verbose_flag(score)
    add_no_prefect_flag(score)


def run(args: argparse.Namespace, early: EarlyStart) -> int:
    """Score the traces the flags ask for; the exit code."""
    install_log_redaction()
    try:
        request = TracesRequest.model_validate(
            {**request_fields_given(args, TracesRequest), "source": args.source}
        )
    except ValueError as exc:
        return fail(one_line(exc))
    no_prefect = wants_no_prefect(args.no_prefect, os.environ)
    if no_prefect:
        show_logs(args.verbose)
    try:
        if no_prefect:
            runtime = TracesRuntime(Runtime(judge_cache=local_judge_cache(os.environ)))
            outcome = asyncio.run(score_traces(request, runtime))
        else:
            from agentflow_eval.cli.traces_flow import traces_flow_run  # Prefect, here alone

            outcome = asyncio.run(traces_flow_run(early.api, request))
    except InputError as exc:
        return fail(str(exc))
    except (RunStopped, StoreError) as exc:
        return fail(one_line(exc), EXIT_RUN_FAILED)
    for line in outcome.lines(shown, batch=args.verbose):
        print(terminal_text(line), file=early.result_stream)
    return EXIT_OK
