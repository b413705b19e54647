"""``agentflow-eval publish``: upload a run folder (one whose publish failed, or any)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_BELOW_THRESHOLD, EXIT_OK, fail
from agentflow_eval.cli.run_flags import add_link_flags

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
    parser.add_argument("--s3-endpoint-url", help="S3-compatible endpoint, e.g. http://host:8333")
    parser.add_argument(
        "--s3-region", help="the S3 region (default: what boto3's configuration says)"
    )
    parser.add_argument("--s3-path-style", action="store_true", help="path-style S3 addressing")
    add_link_flags(parser)


def run(args: argparse.Namespace) -> int:
    from agentflow_eval.publish.publisher import publish_pending
    from agentflow_eval.storage.targets import parse_target

    run_dir = Path(args.run_dir)
    if not (run_dir / "results.json").is_file():
        return fail(f"{run_dir}: no results.json; pass the run folder a run printed")
    try:
        target = (
            parse_target(
                args.target,
                endpoint_url=args.s3_endpoint_url,
                region=args.s3_region,
                path_style=args.s3_path_style,
                public_url=args.s3_public_url,
                links=args.s3_links or ("public" if args.s3_public_url else "presigned"),
                link_expiry_s=args.s3_link_expiry_hours * 3600,
            )
            if args.target
            else None
        )
        outcome = publish_pending(run_dir, target)
    except ValueError as exc:
        return fail(str(exc))
    print(outcome.message)
    return EXIT_OK if outcome.published else EXIT_BELOW_THRESHOLD
