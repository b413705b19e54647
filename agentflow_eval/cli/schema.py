"""``agentflow-eval schema``: write the JSON Schemas of eval-set and config files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_OK
from agentflow_eval.criteria.config_schema import write_schemas

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "schema",
        help="write JSON Schemas of eval-set and config files",
        description="Write the JSON Schemas of eval-set and config files, for an editor "
        "to check and complete them.",
    )
    parser.add_argument("-o", "--output", default=".", help="folder to write into")


def run(args: argparse.Namespace) -> int:
    for path in write_schemas(Path(args.output)):
        print(path)
    return EXIT_OK
