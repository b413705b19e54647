"""``agentflow-eval report``: re-render the HTML report of an earlier run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_OK, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("report", help="re-render the HTML report of an earlier run")
    parser.add_argument("results", help="results.json of an earlier run")
    parser.add_argument("-o", "--output", default="report.html", help="HTML file to write")
    parser.add_argument("--evalset", help="the eval set, to show expected data it has")


def run(args: argparse.Namespace) -> int:
    from agentflow_eval.files.loading import EvalFileError, load_evalset
    from agentflow_eval.report import ResultsFileError, read_results_json, write_html

    try:
        results = read_results_json(Path(args.results))
        eval_set = load_evalset(args.evalset).eval_set if args.evalset else None
    except (ResultsFileError, EvalFileError, FileNotFoundError) as exc:
        return fail(str(exc))
    print(write_html(results, Path(args.output), eval_set))
    return EXIT_OK
