"""``agentflow-eval publish``: upload a run folder (one whose publish failed, or any)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_BELOW_THRESHOLD, EXIT_OK, fail, one_line
from agentflow_eval.cli.request_flags import add_request_flags, request_fields_given
from agentflow_eval.models.request import S3Options
from agentflow_eval.publish.publisher import publish_pending
from agentflow_eval.storage.targets import target_of

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "publish",
        help="upload a run folder that could not be published (or any run folder)",
        description="Publish a finished run folder to a folder or S3-compatible storage, "
        "with the eval set's history (runs.json, index.html, explorer.html, latest.json): "
        "a run whose publish failed is kept marked for this.",
    )
    parser.add_argument("run_dir", help="the run folder (holds results.json, report.html)")
    parser.add_argument(
        "--to",
        dest="target",
        help="s3://bucket/prefix or a folder (default: where the failed publish was going)",
    )
    add_request_flags(parser, ("s3",))


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    if not (run_dir / "results.json").is_file():
        return fail(f"{run_dir}: no results.json; pass the run folder a run printed")
    try:
        s3 = S3Options.model_validate(request_fields_given(args).get("s3", {}))
        target = target_of(args.target, s3) if args.target else None
        outcome = publish_pending(run_dir, target)
    except ValueError as exc:
        return fail(one_line(exc, field=False))
    print(outcome.message)
    return EXIT_OK if outcome.published else EXIT_BELOW_THRESHOLD
